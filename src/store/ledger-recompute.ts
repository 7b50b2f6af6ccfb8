// Every stored figure the ledger determines, recomputed from the ledger and compared (the second half
// of `gateway admin ledger verify`; ADR 0032). The chain walk (ledger-verify.ts) says the rows are the
// ones the gateway wrote; this says the counters billing reads are what those rows add up to, so an
// `UPDATE accounts SET balance_nano = …` is named even though no ledger row changed.
//
// The invariants, for every account A and key K (migration 0023 for the pruned_* figures):
//   A.balance_nano     = A.pruned_balance_nano + Σ credit − Σ debit − Σ (usage cost − shortfall)
//                        (settlement collects at most the balance; the rest is the row's note
//                        "shortfall_nano=N", settlement.ts)
//   A.total_spent_nano = A.pruned_spent_nano + Σ usage cost
//   K.spent_nano       = K.pruned_spent_nano + Σ usage cost of K
//   K.tokens_used      = K.pruned_tokens + Σ usage (input_tokens + output_tokens) of K
//   A.held_nano, A.held_tokens, K.held_nano, K.held_tokens = Σ of the holds rows (requests in flight)
//   monthly_usage (A, month) = Σ usage cost, tokens and count of A's rows of that UTC month (a month
//                        `ledger prune` has touched is left out: the month of an account's first
//                        remaining row and those before it, when it was pruned)
//   usage_hourly       = the ledger's usage rows summed per group (migration 0017; prune subtracts)
// Requests in flight do not touch the balance: admission only raises held_*, which the holds rows
// account for; settlement deletes the hold, appends the ledger row and moves every counter in one
// transaction. Each comparison is ONE statement (the stored figures and the ledger's sums read from
// one snapshot: a statement's own on PostgreSQL under READ COMMITTED, the read transaction of a
// statement on SQLite), so traffic committing meanwhile never shows up as a difference and no long
// snapshot is held. GROUP BY in the database, one pass over the ledger per statement; only the
// differences come back, at most MAX_DIFFERENCES of them (a statement stops at one more).
//
// Not compared: a key's periodic counters (period_spent_nano, period_tokens_used): a change of the
// key's period restarts them at 0 with no ledger row (keys-store.ts policyColumns), so the ledger does
// not determine them.
import { sql, type Kysely, type RawBuilder } from "kysely";
import type { Dialect } from "./dialect.js";
import { groupOf, HOUR_MS, ROLLUP_GROUP_COLUMNS } from "./dimension-sql.js";
import type { Database } from "./tables.js";

/** The most differences listed; more are counted as `truncated`. */
export const MAX_DIFFERENCES = 1000;

export type LedgerFigureTable = "accounts" | "keys" | "monthly_usage" | "usage_hourly";

/** A stored figure that is not what the ledger (or, for held_*, the holds) adds up to. */
export interface LedgerDifference {
  table: LedgerFigureTable;
  /** The row: the account's or the key's id; "ACCOUNT MONTH" for monthly_usage; "KEY HOUR MODEL PROVIDER" for usage_hourly ("-": none). */
  id: string;
  accountId: string;
  field: string;
  stored: bigint;
  recomputed: bigint;
}

export interface LedgerRecomputeResult {
  /** Each figure that differs, by table then id then field; at most MAX_DIFFERENCES. */
  differences: LedgerDifference[];
  /** More differences were found than listed. */
  truncated: boolean;
}

export type LedgerRecomputeStep = "accounts" | "keys" | "monthly_usage" | "usage_hourly";

export const LEDGER_RECOMPUTE_STEPS: readonly LedgerRecomputeStep[] = ["accounts", "keys", "monthly_usage", "usage_hourly"];

export interface LedgerRecomputeOptions {
  accountId?: string;
  /** Called before each statement, with its place among LEDGER_RECOMPUTE_STEPS (1-based). */
  onStep?: (step: LedgerRecomputeStep, index: number, of: number) => void;
}

/** The prefix of the note of a usage row whose cost exceeded the balance (settlement.ts). */
const SHORTFALL_PREFIX = "shortfall_nano=";

/** The uncollected part of a ledger row `l`'s cost: 0 but on a usage row with a shortfall note. */
function shortfallSql(dialect: Dialect): string {
  // SQLite's cast reads the leading digits; PostgreSQL's refuses anything but digits, so those are checked first.
  return dialect === "sqlite"
    ? `case when l.kind = 'usage' and substr(l.note, 1, ${SHORTFALL_PREFIX.length}) = '${SHORTFALL_PREFIX}' then cast(substr(l.note, ${SHORTFALL_PREFIX.length + 1}) as integer) else 0 end`
    : `case when l.kind = 'usage' and l.note ~ '^${SHORTFALL_PREFIX}[0-9]{1,19}$' then cast(substr(l.note, ${SHORTFALL_PREFIX.length + 1}) as numeric) else 0 end`;
}

/** A ledger row `l`'s effect on its account's balance: + a credit, − a debit, − what a usage row collected. */
export function balanceEffectSql(dialect: Dialect): string {
  return `case l.kind when 'credit' then l.cost_nano when 'debit' then -l.cost_nano else ${shortfallSql(dialect)} - l.cost_nano end`;
}

/** The UTC month ("YYYY-MM", as monthOf in core/ids.ts) of a ledger row `alias`. */
function monthSql(dialect: Dialect, alias: string): string {
  return dialect === "sqlite" ? `strftime('%Y-%m', ${alias}.created_at / 1000, 'unixepoch')` : `to_char(to_timestamp(${alias}.created_at / 1000) at time zone 'UTC', 'YYYY-MM')`;
}

/** A figure as either driver returns it: bigint (SQLite, int8), text (PostgreSQL numeric), null: 0. */
function big(value: unknown): bigint {
  if (value === null || value === undefined) return 0n;
  if (typeof value === "bigint") return value;
  return BigInt(String(value));
}

type Row = Record<string, unknown>;

/** Compares every figure; see the top of this file. */
export async function recomputeLedgerFigures(db: Kysely<Database>, dialect: Dialect, options: LedgerRecomputeOptions = {}): Promise<LedgerRecomputeResult> {
  const differences: LedgerDifference[] = [];
  let truncated = false;
  const add = (difference: LedgerDifference) => {
    if (difference.stored === difference.recomputed) return;
    if (differences.length < MAX_DIFFERENCES) differences.push(difference);
    else truncated = true;
  };
  const { accountId } = options;
  const steps = LEDGER_RECOMPUTE_STEPS;
  const limit = MAX_DIFFERENCES + 1;
  const step = (name: LedgerRecomputeStep) => options.onStep?.(name, steps.indexOf(name) + 1, steps.length);

  step("accounts");
  for (const r of await accountRows(db, dialect, accountId, limit)) {
    const id = String(r.id);
    for (const [field, stored, recomputed] of [
      ["balance_nano", r.balance_nano, r.r_balance],
      ["total_spent_nano", r.total_spent_nano, r.r_spent],
      ["held_nano", r.held_nano, r.r_held],
      ["held_tokens", r.held_tokens, r.r_held_tokens],
    ] as const) {
      add({ table: "accounts", id, accountId: id, field, stored: big(stored), recomputed: big(recomputed) });
    }
  }

  step("keys");
  for (const r of await keyRows(db, accountId, limit)) {
    const id = String(r.id);
    for (const [field, stored, recomputed] of [
      ["spent_nano", r.spent_nano, r.r_spent],
      ["tokens_used", r.tokens_used, r.r_tokens],
      ["held_nano", r.held_nano, r.r_held],
      ["held_tokens", r.held_tokens, r.r_held_tokens],
    ] as const) {
      add({ table: "keys", id, accountId: String(r.account_id), field, stored: big(stored), recomputed: big(recomputed) });
    }
  }

  step("monthly_usage");
  for (const r of await monthlyRows(db, dialect, accountId, limit)) {
    const account = String(r.account_id);
    for (const field of ["cost_nano", "tokens", "requests"]) {
      add({ table: "monthly_usage", id: `${account} ${String(r.month)}`, accountId: account, field, stored: big(r[`s_${field}`]), recomputed: big(r[`r_${field}`]) });
    }
  }

  step("usage_hourly");
  const summed = await rollupSummedColumns(db);
  for (const r of await hourlyRows(db, summed, accountId, limit)) {
    const hour = new Date(Number(big(r.hour)) * HOUR_MS).toISOString().slice(0, 13);
    const id = [r.key_id, `${hour}h`, r.model, r.provider].map((part) => (part === "" ? "-" : String(part))).join(" ");
    for (const field of ["requests", ...summed]) {
      add({ table: "usage_hourly", id, accountId: String(r.account_id), field, stored: big(r[`s_${field}`]), recomputed: big(r[`r_${field}`]) });
    }
  }
  return { differences, truncated };
}

/** `and <column> = <account>` when verifying one account. */
function forAccount(column: string, accountId: string | undefined): RawBuilder<unknown> {
  return accountId === undefined ? sql`` : sql`and ${sql.raw(column)} = ${accountId}`;
}

async function accountRows(db: Kysely<Database>, dialect: Dialect, accountId: string | undefined, limit: number): Promise<Row[]> {
  const { rows } = await sql<Row>`
    select a.id, a.balance_nano, a.total_spent_nano, a.held_nano, a.held_tokens,
      a.pruned_balance_nano + coalesce(l.balance, 0) as r_balance,
      a.pruned_spent_nano + coalesce(l.spent, 0) as r_spent,
      coalesce(h.amount, 0) as r_held, coalesce(h.tokens, 0) as r_held_tokens
    from accounts a
    left join (
      select l.account_id, sum(${sql.raw(balanceEffectSql(dialect))}) as balance,
        sum(case when l.kind = 'usage' then l.cost_nano else 0 end) as spent
      from ledger l where 1 = 1 ${forAccount("l.account_id", accountId)} group by l.account_id
    ) l on l.account_id = a.id
    left join (
      select h.account_id, sum(h.amount_nano) as amount, sum(h.tokens) as tokens
      from holds h where 1 = 1 ${forAccount("h.account_id", accountId)} group by h.account_id
    ) h on h.account_id = a.id
    where (a.balance_nano <> a.pruned_balance_nano + coalesce(l.balance, 0)
      or a.total_spent_nano <> a.pruned_spent_nano + coalesce(l.spent, 0)
      or a.held_nano <> coalesce(h.amount, 0) or a.held_tokens <> coalesce(h.tokens, 0))
      ${forAccount("a.id", accountId)}
    order by a.id limit ${limit}`.execute(db);
  return rows;
}

async function keyRows(db: Kysely<Database>, accountId: string | undefined, limit: number): Promise<Row[]> {
  // One account: its keys' rows found by key (ledger_key_time), not a pass over the ledger.
  const ofAccount = accountId === undefined ? sql`` : sql`and l.key_id in (select id from keys where account_id = ${accountId})`;
  const { rows } = await sql<Row>`
    select k.id, k.account_id, k.spent_nano, k.tokens_used, k.held_nano, k.held_tokens,
      k.pruned_spent_nano + coalesce(l.spent, 0) as r_spent, k.pruned_tokens + coalesce(l.tokens, 0) as r_tokens,
      coalesce(h.amount, 0) as r_held, coalesce(h.tokens, 0) as r_held_tokens
    from keys k
    left join (
      select l.key_id, sum(l.cost_nano) as spent, sum(l.input_tokens + l.output_tokens) as tokens
      from ledger l where l.kind = 'usage' and l.key_id is not null ${ofAccount} group by l.key_id
    ) l on l.key_id = k.id
    left join (
      select h.key_id, sum(h.amount_nano) as amount, sum(h.tokens) as tokens
      from holds h where h.key_id is not null ${forAccount("h.account_id", accountId)} group by h.key_id
    ) h on h.key_id = k.id
    where (k.spent_nano <> k.pruned_spent_nano + coalesce(l.spent, 0)
      or k.tokens_used <> k.pruned_tokens + coalesce(l.tokens, 0)
      or k.held_nano <> coalesce(h.amount, 0) or k.held_tokens <> coalesce(h.tokens, 0))
      ${forAccount("k.account_id", accountId)}
    order by k.id limit ${limit}`.execute(db);
  return rows;
}

/**
 * Stored rows against the ledger's sums per group, both ways (a stored row without ledger rows, ledger
 * rows without a stored row): one UNION ALL of the two, grouped, rather than a FULL JOIN of two
 * aggregates, which SQLite joins by nested loops (quadratic; measured: 29 s for 20,000 rows).
 * `stored` and `ledger` select the group columns, then for each figure its `s_` and `r_` value (0 on
 * the other side's rows).
 */
function storedAgainstLedger(group: readonly string[], figures: readonly string[], stored: RawBuilder<unknown>, ledger: RawBuilder<unknown>): RawBuilder<Row> {
  const sums = sql.raw(figures.map((f) => `sum(x.s_${f}) as s_${f}, sum(x.r_${f}) as r_${f}`).join(", "));
  const differs = sql.raw(figures.map((f) => `sum(x.s_${f}) <> sum(x.r_${f})`).join(" or "));
  const columns = sql.raw(group.map((g) => `x.${g}`).join(", "));
  return sql<Row>`select ${columns}, ${sums} from (${stored} union all ${ledger}) x group by ${columns} having ${differs}`;
}

/** `name` as the figure of its side, 0 as the other side's: `s_name, 0 as r_name` or `0 as s_name, r_name`. */
function sides(figures: readonly string[], values: readonly string[], side: "s" | "r"): string {
  return figures.map((f, i) => (side === "s" ? `${values[i]} as s_${f}, 0 as r_${f}` : `0 as s_${f}, ${values[i]} as r_${f}`)).join(", ");
}

const MONTHLY_FIGURES = ["cost_nano", "tokens", "requests"];

async function monthlyRows(db: Kysely<Database>, dialect: Dialect, accountId: string | undefined, limit: number): Promise<Row[]> {
  const month = monthSql(dialect, "l");
  const firstMonth = sql.raw(monthSql(dialect, "f"));
  const stored = sql`select m.account_id, m.month, ${sql.raw(sides(MONTHLY_FIGURES, ["m.cost_nano", "m.tokens", "m.requests"], "s"))}
    from monthly_usage m where 1 = 1 ${forAccount("m.account_id", accountId)}`;
  const ledger = sql`select l.account_id, ${sql.raw(month)}, ${sql.raw(sides(MONTHLY_FIGURES, ["l.cost_nano", "l.input_tokens + l.output_tokens", "1"], "r"))}
    from ledger l where l.kind = 'usage' ${forAccount("l.account_id", accountId)}`;
  const { rows } = await sql<Row>`
    select d.* from (${storedAgainstLedger(["account_id", "month"], MONTHLY_FIGURES, stored, ledger)}) d
    left join accounts a on a.id = d.account_id
    where a.ledger_anchor is null
      or d.month > (select ${firstMonth} from ledger f where f.account_id = a.id order by f.account_id, f.id limit 1)
    order by d.account_id, d.month limit ${limit}`.execute(db);
  return rows;
}

/** The columns usage_hourly sums, as the database has them (every column but the group and the request count). */
async function rollupSummedColumns(db: Kysely<Database>): Promise<string[]> {
  const table = (await db.introspection.getTables()).find((t) => t.name === "usage_hourly");
  const group = new Set<string>([...ROLLUP_GROUP_COLUMNS, "requests"]);
  return (table?.columns ?? []).map((c) => c.name).filter((name) => !group.has(name));
}

async function hourlyRows(db: Kysely<Database>, summed: readonly string[], accountId: string | undefined, limit: number): Promise<Row[]> {
  const figures = ["requests", ...summed];
  const stored = sql`select ${sql.raw(ROLLUP_GROUP_COLUMNS.map((c) => `u.${c}`).join(", "))}, ${sql.raw(
    sides(
      figures,
      figures.map((f) => `u.${f}`),
      "s",
    ),
  )}
    from usage_hourly u where 1 = 1 ${forAccount("u.account_id", accountId)}`;
  const ledger = sql`select ${sql.raw(groupOf("l").join(", "))}, ${sql.raw(sides(figures, ["1", ...summed.map((c) => `coalesce(l.${c}, 0)`)], "r"))}
    from ledger l where l.kind = 'usage' ${forAccount("l.account_id", accountId)}`;
  const { rows } = await sql<Row>`
    select d.* from (${storedAgainstLedger(ROLLUP_GROUP_COLUMNS, figures, stored, ledger)}) d
    order by d.account_id, d.key_id, d.hour limit ${limit}`.execute(db);
  return rows;
}
