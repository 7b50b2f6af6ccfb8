// usage_hourly: the ledger's usage rows summed per key, UTC hour, account, model and provider, so that
// /v1/usage and the dashboard's usage views read a few hundred rollup rows instead of every ledger row
// of the window (docs/storage.md, "Usage rollup"; ADR 0027). Issue 26: a key with a million rows in a
// month answered /v1/usage in seconds; from the rollup it is milliseconds at any ledger size.
//
// The database maintains it, by triggers on the ledger, in the statement that inserts (or deletes) the
// ledger row: every path that appends a usage row (SQLite settlement, gw_batch, credits, hand-written
// SQL) is covered without knowing it, and a rollup row can never disagree with the committed ledger
// (same transaction; a rolled-back insert takes its rollup change with it). A delete (`ledger prune`,
// rows older than 365 days) subtracts the row again and drops a rollup row that reaches 0 requests,
// so the rollup is exactly the ledger's sums for every hour, pruned or not.
//
// No NULLs in the key: a usage row without a key, model or provider is summed under '' (readers map
// it back to null). The summed columns are frozen here like any migration's; a dimension added later
// adds its columns to usage_hourly and re-creates the triggers in its own migration
// (test/storage/usage-rollup.test.ts fails while SUMMED_COLUMNS and ROLLUP_SUMMED_COLUMNS differ).
//
// ledger_account_chain (account_id, id) on SQLite too: the ledger page and the CSV, newest first by id,
// sorted all of an account's rows on SQLite without it (PostgreSQL has it since migration 0010).
//
// Existing ledger rows are summed into the table in this migration's transaction, after the triggers
// exist: on PostgreSQL CREATE TRIGGER holds a lock on the ledger that blocks inserts until commit, on
// SQLite the write lock does, so no row is counted twice or missed.
import { sql, type Kysely } from "kysely";
import type { Dialect } from "../dialect.js";

export const HOUR_MS = 3_600_000;

/** The ledger columns usage_hourly sums (usage-report.ts SUMMED_COLUMNS at this migration). */
export const ROLLUP_SUMMED_COLUMNS = [
  "input_tokens",
  "cached_tokens",
  "output_tokens",
  "reasoning_tokens",
  "cost_nano",
  "cache_write_5m_tokens",
  "cache_write_1h_tokens",
  "web_search_calls",
  "images",
  "video_seconds",
  "input_cost_nano",
  "cached_input_cost_nano",
  "cache_write_5m_cost_nano",
  "cache_write_1h_cost_nano",
  "output_cost_nano",
  "web_search_cost_nano",
  "request_cost_nano",
  "image_cost_nano",
  "video_cost_nano",
  "cache_saving_nano",
] as const;

/** The rollup's group: usage_hourly's primary key, in index order (key first: /v1/usage reads by key). */
const GROUP_COLUMNS = ["key_id", "hour", "account_id", "model", "provider"] as const;

/** The group of a ledger row `r` ("new" or "old"), in GROUP_COLUMNS order. */
function groupOf(r: string): string[] {
  return [`coalesce(${r}.key_id, '')`, `${r}.created_at / ${HOUR_MS}`, `${r}.account_id`, `coalesce(${r}.model, '')`, `coalesce(${r}.provider, '')`];
}

const PK_MATCH = (r: string) => GROUP_COLUMNS.map((c, i) => `${c} = ${groupOf(r)[i]}`).join(" and ");

function addRowSql(): string {
  const columns = [...GROUP_COLUMNS, "requests", ...ROLLUP_SUMMED_COLUMNS].join(", ");
  const values = [...groupOf("new"), "1", ...ROLLUP_SUMMED_COLUMNS.map((c) => `coalesce(new.${c}, 0)`)].join(", ");
  const sums = ["requests", ...ROLLUP_SUMMED_COLUMNS].map((c) => `${c} = usage_hourly.${c} + excluded.${c}`).join(", ");
  return `insert into usage_hourly (${columns}) values (${values})
    on conflict (${GROUP_COLUMNS.join(", ")}) do update set ${sums}`;
}

function subtractRowSql(): string {
  const sets = ["requests = requests - 1", ...ROLLUP_SUMMED_COLUMNS.map((c) => `${c} = ${c} - coalesce(old.${c}, 0)`)].join(", ");
  return `update usage_hourly set ${sets} where ${PK_MATCH("old")};
      delete from usage_hourly where ${PK_MATCH("old")} and requests = 0;`;
}

/** What usage_hourly holds, computed from the ledger: its columns in table order, one row per group. */
export function rollupOfLedgerSql(): string {
  const group = groupOf("l");
  return `select ${group.map((g, i) => `${g} as ${GROUP_COLUMNS[i]}`).join(", ")}, count(*) as requests,
      ${ROLLUP_SUMMED_COLUMNS.map((c) => `coalesce(sum(l.${c}), 0) as ${c}`).join(", ")}
    from ledger l where l.kind = 'usage'
    group by ${group.join(", ")}`;
}

/** Sums every usage row of the ledger into usage_hourly (the table is empty). */
function backfillSql(): string {
  return `insert into usage_hourly (${[...GROUP_COLUMNS, "requests", ...ROLLUP_SUMMED_COLUMNS].join(", ")}) ${rollupOfLedgerSql()}`;
}

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  let table = db.schema
    .createTable("usage_hourly")
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("hour", "bigint", (c) => c.notNull())
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("model", "text", (c) => c.notNull())
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("requests", "bigint", (c) => c.notNull());
  for (const column of ROLLUP_SUMMED_COLUMNS) table = table.addColumn(column, "bigint", (c) => c.notNull().defaultTo(0));
  table = table.addPrimaryKeyConstraint("usage_hourly_pk", [...GROUP_COLUMNS]);
  // SQLite: the primary key is the table (one b-tree, the sums in its leaves). PostgreSQL: room on each
  // page for the updated version of a row (a HOT update: the indexes are not touched).
  await (dialect === "sqlite" ? table.modifyEnd(sql`without rowid`) : table.modifyEnd(sql`with (fillfactor = 70)`)).execute();
  // The dashboard's account view, and the administrators' view across accounts.
  await db.schema.createIndex("usage_hourly_account").on("usage_hourly").columns(["account_id", "hour"]).execute();
  await db.schema.createIndex("usage_hourly_hour").on("usage_hourly").column("hour").execute();

  if (dialect === "sqlite") {
    await sql
      .raw(
        `create trigger ledger_usage_rollup after insert on ledger when new.kind = 'usage'
      begin ${addRowSql()}; end`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger ledger_usage_unroll after delete on ledger when old.kind = 'usage'
      begin ${subtractRowSql()} end`,
      )
      .execute(db);
  } else {
    await sql
      .raw(
        `create function ledger_usage_rollup() returns trigger language plpgsql as $$
      begin
        ${addRowSql()};
        return null;
      end $$`,
      )
      .execute(db);
    await sql
      .raw(
        `create function ledger_usage_unroll() returns trigger language plpgsql as $$
      begin
        ${subtractRowSql()}
        return null;
      end $$`,
      )
      .execute(db);
    await sql`create trigger ledger_usage_rollup after insert on ledger for each row when (new.kind = 'usage') execute function ledger_usage_rollup()`.execute(db);
    await sql`create trigger ledger_usage_unroll after delete on ledger for each row when (old.kind = 'usage') execute function ledger_usage_unroll()`.execute(db);
  }
  await sql.raw(backfillSql()).execute(db);
  // The ledger page and the CSV read an account's rows newest first by id: PostgreSQL has had this
  // index since 0010 (the chain's previous row); on SQLite they sorted the account's rows instead.
  await sql`create index if not exists ledger_account_chain on ledger (account_id, id)`.execute(db);
}
