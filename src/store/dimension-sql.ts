// The SQL of the ledger's per-dimension columns and of the usage rollup's triggers (usage_hourly,
// migration 0017; ADR 0027), built from column lists that the calling migration passes. A migration is
// frozen: it lists its columns literally and calls these builders with them, so that its SQL never
// changes when the dimension list (src/core/dimensions.ts) does. A migration that adds a billing
// dimension calls addDimensionColumns (CONTRIBUTING.md, "Adding a billing dimension").
import { sql, type ColumnDefinitionBuilder, type Kysely } from "kysely";
import type { Dialect } from "./dialect.js";
import { applyLedgerChainTriggers } from "./ledger-chain-sql.js";
import type { LedgerChainColumn } from "./ledger-chain.js";

/** The rollup's hour: usage_hourly.hour is created_at / HOUR_MS (UTC hours since the epoch). */
export const HOUR_MS = 3_600_000;

/** The rollup's group: usage_hourly's primary key, in index order (key first: /v1/usage reads by key). */
export const ROLLUP_GROUP_COLUMNS = ["key_id", "hour", "account_id", "model", "provider"] as const;

/** The group of a ledger row `r` ("new", "old" or a query's alias), in ROLLUP_GROUP_COLUMNS order. */
export function groupOf(r: string): string[] {
  return [`coalesce(${r}.key_id, '')`, `${r}.created_at / ${HOUR_MS}`, `${r}.account_id`, `coalesce(${r}.model, '')`, `coalesce(${r}.provider, '')`];
}

const pkMatch = (r: string) => ROLLUP_GROUP_COLUMNS.map((c, i) => `${c} = ${groupOf(r)[i]}`).join(" and ");

/** The upsert that adds a usage row to its group, summing `summed`. */
function addRowSql(summed: readonly string[]): string {
  const columns = [...ROLLUP_GROUP_COLUMNS, "requests", ...summed].join(", ");
  const values = [...groupOf("new"), "1", ...summed.map((c) => `coalesce(new.${c}, 0)`)].join(", ");
  const sums = ["requests", ...summed].map((c) => `${c} = usage_hourly.${c} + excluded.${c}`).join(", ");
  return `insert into usage_hourly (${columns}) values (${values})
    on conflict (${ROLLUP_GROUP_COLUMNS.join(", ")}) do update set ${sums}`;
}

/** Subtracts a deleted usage row from its group and drops a group left with no requests. */
function subtractRowSql(summed: readonly string[]): string {
  const sets = ["requests = requests - 1", ...summed.map((c) => `${c} = ${c} - coalesce(old.${c}, 0)`)].join(", ");
  return `update usage_hourly set ${sets} where ${pkMatch("old")};
      delete from usage_hourly where ${pkMatch("old")} and requests = 0;`;
}

/** What usage_hourly holds, computed from the ledger: its group, the request count and `summed`, one row per group. */
export function rollupOfLedgerSql(summed: readonly string[]): string {
  const group = groupOf("l");
  return `select ${group.map((g, i) => `${g} as ${ROLLUP_GROUP_COLUMNS[i]}`).join(", ")}, count(*) as requests,
      ${summed.map((c) => `coalesce(sum(l.${c}), 0) as ${c}`).join(", ")}
    from ledger l where l.kind = 'usage'
    group by ${group.join(", ")}`;
}

/** Sums every usage row of the ledger into usage_hourly (the table is empty). */
export function rollupBackfillSql(summed: readonly string[]): string {
  return `insert into usage_hourly (${[...ROLLUP_GROUP_COLUMNS, "requests", ...summed].join(", ")}) ${rollupOfLedgerSql(summed)}`;
}

/**
 * What keeps usage_hourly equal to the ledger's sums of `summed`: on SQLite the two ledger triggers
 * (ledger_usage_rollup after insert, ledger_usage_unroll after delete), on PostgreSQL the two trigger
 * functions of those names (the triggers that call them are created once, by migration 0017).
 * `replace`: the statements replace those of an earlier migration (SQLite: dropped first).
 */
export function rollupTriggerSql(dialect: Dialect, summed: readonly string[], { replace }: { replace: boolean }): string[] {
  if (dialect === "sqlite") {
    return [
      ...(replace ? ["drop trigger if exists ledger_usage_rollup", "drop trigger if exists ledger_usage_unroll"] : []),
      `create trigger ledger_usage_rollup after insert on ledger when new.kind = 'usage'
      begin ${addRowSql(summed)}; end`,
      `create trigger ledger_usage_unroll after delete on ledger when old.kind = 'usage'
      begin ${subtractRowSql(summed)} end`,
    ];
  }
  const create = replace ? "create or replace function" : "create function";
  return [
    `${create} ledger_usage_rollup() returns trigger language plpgsql as $$
      begin
        ${addRowSql(summed)};
        return null;
      end $$`,
    `${create} ledger_usage_unroll() returns trigger language plpgsql as $$
      begin
        ${subtractRowSql(summed)}
        return null;
      end $$`,
  ];
}

/** The new columns of a billing dimension and the lists that include them, as its migration knows them. */
export interface DimensionColumns {
  /** The ledger columns the dimension adds: its count column (when it records one) and its cost column. */
  columns: readonly string[];
  /** Every column usage_hourly sums once they are added: the previous migration's list and `columns`. */
  summed: readonly string[];
  /** Every column the ledger's hash chain covers once they are added: the previous list, `columns` appended. */
  chained: readonly LedgerChainColumn[];
}

/**
 * Adds a billing dimension's columns: to the ledger (bigint, not null, default 0, never negative) and
 * to usage_hourly, then re-creates the rollup's triggers and the chain's triggers with the lists that
 * include them. Existing rows get 0: their hashes stay valid (a 0 contributes nothing to the
 * encoding) and their rollup sums stay exact. One transaction, as every migration.
 */
export async function addDimensionColumns(db: Kysely<unknown>, dialect: Dialect, { columns, summed, chained }: DimensionColumns): Promise<void> {
  for (const column of columns) {
    if (!summed.includes(column) || !chained.some((c) => c.name === column)) throw new Error(`${column} must be in the summed and the chained columns`);
  }
  const nonNegative = (column: string) => (c: ColumnDefinitionBuilder) =>
    c
      .notNull()
      .defaultTo(0)
      .check(sql`${sql.ref(column)} >= 0`);
  for (const column of columns) await db.schema.alterTable("ledger").addColumn(column, "bigint", nonNegative(column)).execute();
  for (const column of columns) {
    await db.schema
      .alterTable("usage_hourly")
      .addColumn(column, "bigint", (c) => c.notNull().defaultTo(0))
      .execute();
  }
  for (const statement of rollupTriggerSql(dialect, summed, { replace: true })) await sql.raw(statement).execute(db);
  await applyLedgerChainTriggers(db, dialect, chained);
}
