// Read models for GET /v1/me and GET /v1/usage. Both stay indexed at any ledger size:
// - the profile is two primary-key lookups (accounts, monthly_usage (account_id, month)) in one join;
// - key usage reads the window's whole hours from usage_hourly (migration 0017: one range of its primary
//   key) and the partial hours at its edges from the ledger (ledger_key_time), grouped by model and UTC
//   day in the database; the totals and both breakdowns are folded from those few groups in memory.
//   test/billing/usage-queries.test.ts and test/billing/ledger-growth-plans.test.ts check the plans.
import { sql, type Kysely } from "kysely";
import { monthOf } from "../core/ids.js";
import type { Nano } from "../core/money.js";
import { GatewayError } from "../errors/catalogue.js";
import type { AccountsTable, Database } from "../store/tables.js";
import { nextMonthStart } from "./admission.js";
import { DIMENSION_SET, type DimensionSet } from "../core/dimensions.js";
import { addSums, emptyTotals, sumColumnsSql, type UsageSumsRow, type UsageTotals } from "./usage-report.js";
import { keyRollupQuery, splitWindow } from "./usage-rollup.js";

const DAY_MS = 86_400_000;
const DEFAULT_WINDOW_MS = 30 * DAY_MS;

export interface AccountProfile {
  accountId: string;
  email: string;
  status: AccountsTable["status"];
  tier: string;
  defaultModel: string | null;
  balance: Nano;
  /** Reserved by requests in flight. */
  held: Nano;
  heldTokens: number;
  totalSpent: Nano;
  monthlyBudget: Nano | null;
  monthlyTokenBudget: number | null;
  /** The current UTC month, "YYYY-MM", and what was settled in it. */
  month: string;
  monthSpent: Nano;
  monthTokens: number;
  monthRequests: number;
  /** When the monthly budget starts over (ISO, UTC). */
  monthResetsAt: string;
}

export type { UsageTotals } from "./usage-report.js";

export interface KeyUsage {
  keyId: string;
  /** The window, epoch ms, start inclusive, end exclusive. */
  start: number;
  end: number;
  totals: UsageTotals;
  byModel: Array<UsageTotals & { model: string }>;
  /** UTC days ("YYYY-MM-DD") that have usage, ascending. */
  byDay: Array<UsageTotals & { day: string }>;
}

export async function accountProfile(db: Kysely<Database>, accountId: string, now: number): Promise<AccountProfile> {
  const month = monthOf(now);
  const row = await db
    .selectFrom("accounts")
    .leftJoin("monthly_usage", (join) => join.onRef("monthly_usage.account_id", "=", "accounts.id").on("monthly_usage.month", "=", month))
    .select([
      "accounts.id",
      "accounts.email",
      "accounts.status",
      "accounts.tier",
      "accounts.default_model",
      "accounts.balance_nano",
      "accounts.held_nano",
      "accounts.held_tokens",
      "accounts.total_spent_nano",
      "accounts.monthly_budget_nano",
      "accounts.monthly_token_budget",
      "monthly_usage.cost_nano",
      "monthly_usage.tokens",
      "monthly_usage.requests",
    ])
    .where("accounts.id", "=", accountId)
    .executeTakeFirst();
  if (!row) throw new GatewayError("not_found", `no account ${accountId}`);
  return {
    accountId: row.id,
    email: row.email,
    status: row.status,
    tier: row.tier,
    defaultModel: row.default_model,
    balance: row.balance_nano,
    held: row.held_nano,
    heldTokens: Number(row.held_tokens),
    totalSpent: row.total_spent_nano,
    monthlyBudget: row.monthly_budget_nano,
    monthlyTokenBudget: row.monthly_token_budget === null ? null : Number(row.monthly_token_budget),
    month,
    monthSpent: row.cost_nano ?? 0n,
    monthTokens: Number(row.tokens ?? 0n),
    monthRequests: Number(row.requests ?? 0n),
    monthResetsAt: nextMonthStart(month),
  };
}

export type GroupRow = UsageSumsRow & { model: string | null; day: bigint };

/** The ledger query behind keyUsage, exported so that tests can EXPLAIN exactly what runs. */
export function keyUsageQuery(keyId: string, start: number, end: number, dimensions: DimensionSet = DIMENSION_SET) {
  return sql<GroupRow>`select model, created_at / ${sql.lit(DAY_MS)} as day, ${sumColumnsSql(dimensions)}
    from ledger
    where key_id = ${keyId} and created_at >= ${BigInt(start)} and created_at < ${BigInt(end)} and kind = 'usage'
    group by model, created_at / ${sql.lit(DAY_MS)}`;
}

export async function keyUsage(
  db: Kysely<Database>,
  keyId: string,
  range: { start?: number; end?: number },
  now: number,
  dimensions: DimensionSet = DIMENSION_SET,
): Promise<KeyUsage> {
  // The default window ends just after now, so that a row written this millisecond is included.
  const end = range.end ?? now + 1;
  const start = range.start ?? end - DEFAULT_WINDOW_MS;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start > end) {
    throw new GatewayError("invalid_request", "start must be a time before end", { param: "start" });
  }
  // Whole hours from the rollup, the partial hours at the window's edges from the ledger (usage-rollup.ts).
  const window = splitWindow(start, end);
  const parts = [];
  if (window.firstHour < window.endHour) parts.push(keyRollupQuery(keyId, window.firstHour, window.endHour, dimensions).execute(db));
  for (const edge of window.edges) parts.push(keyUsageQuery(keyId, edge.start, edge.end, dimensions).execute(db));
  const rows = (await Promise.all(parts)).flatMap((result) => result.rows as GroupRow[]);
  return foldKeyUsage(keyId, start, end, rows, dimensions);
}

/** KeyUsage from grouped rows (model, UTC day, sums): the rollup's and the ledger's alike. */
export function foldKeyUsage(keyId: string, start: number, end: number, rows: readonly GroupRow[], dimensions: DimensionSet = DIMENSION_SET): KeyUsage {
  const totals = emptyTotals(dimensions);
  const byModel = new Map<string, UsageTotals>();
  const byDay = new Map<bigint, UsageTotals>();
  for (const row of rows) {
    const model = row.model ?? "unknown";
    for (const target of [totals, entry(byModel, model, dimensions), entry(byDay, BigInt(row.day), dimensions)]) addSums(target, row, dimensions);
  }
  return {
    keyId,
    start,
    end,
    totals,
    byModel: [...byModel].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([model, t]) => ({ model, ...t })),
    byDay: [...byDay].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([day, t]) => ({ day: new Date(Number(day) * DAY_MS).toISOString().slice(0, 10), ...t })),
  };
}

function entry<K>(map: Map<K, UsageTotals>, key: K, dimensions: DimensionSet): UsageTotals {
  let found = map.get(key);
  if (!found) map.set(key, (found = emptyTotals(dimensions)));
  return found;
}
