// Admission on SQLite: the conditional UPDATEs of admission.ts as precompiled SQL, run as one operation
// of the write batcher (sqlite-writer.ts). Same statements and order as documented in admission.ts.
// A refusal is answered as a value (the GatewayError, returned, not thrown: the batch goes on) and
// changes nothing: when the account's reservation was already written (the monthly budget or the key
// refused), it is taken back by the exact inverse UPDATE before answering. The batch holds SQLite's
// write lock from BEGIN IMMEDIATE to COMMIT, so nobody can observe the reservation in between.
// The traffic limits are judged and counted in memory (traffic-windows-sqlite.ts): a refusal by them
// changes no window, and the windows changed are written once per transaction, before COMMIT.
import type { Nano } from "../core/money.js";
import type { GatewayError } from "../errors/catalogue.js";
import { budgetScopesOf, CLAMPABLE_REFUSALS, refusalError, type AdmissionCore, type Headroom, type Refusal } from "./admission.js";
import { budgetHeadroom, judgeBudgets } from "../core/budget-scopes.js";
import { budgetCountersSqlite, holdInBudgetsSqlite } from "./budgets-sqlite.js";
import type { PeriodStarts } from "./key-period.js";
import { Statement, type SqlExec } from "../store/sqlite-writer.js";
import type { TrafficStatus } from "../core/rate-limit-headers.js";
import { trafficRecordOf, trafficRefusalError, trafficStatus } from "../core/traffic-limits.js";
import { trafficWindows } from "./traffic-windows-sqlite.js";

interface AccountReserved {
  held_nano: bigint;
  held_tokens: bigint;
  monthly_budget_nano: bigint | null;
  monthly_token_budget: bigint | null;
}

interface AccountRow extends AccountReserved {
  status: string;
  balance_nano: bigint;
  clamp_output: bigint;
}

interface KeyRow {
  period: string | null;
  period_budget_nano: bigint | null;
  period_token_cap: bigint | null;
  period_started_at: bigint;
  period_spent_nano: bigint;
  period_tokens_used: bigint;
  account_id: string;
  status: string;
  budget_cap_nano: bigint | null;
  spent_nano: bigint;
  held_nano: bigint;
  token_cap: bigint | null;
  tokens_used: bigint;
  held_tokens: bigint;
  clamp_output: bigint;
}

// Parameters: amount, tokens, account id, amount.
const RESERVE_ACCOUNT = new Statement<AccountReserved>(`
  update accounts set held_nano = held_nano + ?, held_tokens = held_tokens + ?
  where id = ? and status = 'active' and balance_nano - held_nano >= ?
  returning held_nano, held_tokens, monthly_budget_nano, monthly_token_budget`);

// Parameters: amount, tokens, account id. The inverse of RESERVE_ACCOUNT, for a refusal after it.
const UNRESERVE_ACCOUNT = new Statement<never>(`update accounts set held_nano = held_nano - ?, held_tokens = held_tokens - ? where id = ?`);

const MONTH_USAGE = new Statement<{ cost_nano: bigint; tokens: bigint }>(`select cost_nano, tokens from monthly_usage where account_id = ? and month = ?`);

// The start of the key's current period, from the three starts passed (day, week, month).
const CURRENT_PERIOD_START = `(case period when 'day' then ? when 'week' then ? else ? end)`;

// Parameters: amount, tokens, key id, account id, amount, tokens, then the period starts (day, week,
// month), amount, the period starts again, tokens. The period's counters count only when they belong
// to the current period (period_started_at at or after its start).
const RESERVE_KEY = new Statement<{ id: string }>(`
  update keys set held_nano = held_nano + ?, held_tokens = held_tokens + ?
  where id = ? and account_id = ? and status = 'enabled'
    and (budget_cap_nano is null or spent_nano + held_nano + ? <= budget_cap_nano)
    and (token_cap is null or tokens_used + held_tokens + ? <= token_cap)
    and (period is null or (
      (period_budget_nano is null or
        (case when period_started_at >= ${CURRENT_PERIOD_START} then period_spent_nano else 0 end) + held_nano + ? <= period_budget_nano)
      and (period_token_cap is null or
        (case when period_started_at >= ${CURRENT_PERIOD_START} then period_tokens_used else 0 end) + held_tokens + ? <= period_token_cap)))
  returning id`);

// Parameters: amount, tokens, key id. The inverse of RESERVE_KEY, for a refusal by a traffic limit after it.
const UNRESERVE_KEY = new Statement<never>(`update keys set held_nano = held_nano - ?, held_tokens = held_tokens - ? where id = ?`);

const INSERT_HOLD = new Statement<never>(`
  insert into holds (id, account_id, key_id, request_id, amount_nano, tokens, created_at, expires_at, traffic, budgets, tags, holder)
  values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);

const ACCOUNT_ROW = new Statement<AccountRow>(
  `select status, balance_nano, held_nano, held_tokens, monthly_budget_nano, monthly_token_budget, clamp_output from accounts where id = ?`,
);

const KEY_ROW = new Statement<KeyRow>(
  `select account_id, status, budget_cap_nano, spent_nano, held_nano, token_cap, tokens_used, held_tokens, clamp_output,
    period, period_budget_nano, period_token_cap, period_started_at, period_spent_nano, period_tokens_used from keys where id = ?`,
);

/** The hold's traffic figures (null: no limit applied; the hold is holdOf(r, them)), or the refusal (returned, not thrown) with nothing changed. */
export function reserveSqlite(exec: SqlExec, r: AdmissionCore): TrafficStatus | null | GatewayError {
  const { request, amount, month } = r;
  const tokens = BigInt(r.tokens);

  const account = RESERVE_ACCOUNT.first(exec, [amount, tokens, request.accountId, amount]);
  if (!account) return refuse(exec, r, diagnoseAccount(exec, request.accountId, amount, tokens, month));

  if (account.monthly_budget_nano !== null || account.monthly_token_budget !== null) {
    const used = monthUsage(exec, request.accountId, month);
    // held_* already include this reservation.
    const overUsd = account.monthly_budget_nano !== null && used.cost + account.held_nano > account.monthly_budget_nano;
    const overTokens = account.monthly_token_budget !== null && used.tokens + account.held_tokens > account.monthly_token_budget;
    if (overUsd || overTokens) {
      UNRESERVE_ACCOUNT.changes(exec, [amount, tokens, request.accountId]);
      return refuse(exec, r, { code: "monthly_budget_exceeded" });
    }
  }

  const { day, week, month: monthStart } = r.periods;
  const key = RESERVE_KEY.first(exec, [amount, tokens, request.keyId, request.accountId, amount, tokens, day, week, monthStart, amount, day, week, monthStart, tokens]);
  if (!key) {
    UNRESERVE_ACCOUNT.changes(exec, [amount, tokens, request.accountId]);
    return refuse(exec, r, diagnoseKey(exec, r, amount, tokens));
  }

  // The budget scopes (a workspace key's workspace and member budgets), judged before anything is written to them.
  const budgets = request.budgets !== undefined && request.budgets.length > 0 ? request.budgets : null;
  const scopes = budgets === null ? null : budgetScopesOf(budgets);
  if (budgets !== null && scopes !== null) {
    const verdict = judgeBudgets(budgets, budgetCountersSqlite(exec, scopes), month, amount, tokens);
    if (verdict !== null) {
      UNRESERVE_KEY.changes(exec, [amount, tokens, request.keyId]);
      UNRESERVE_ACCOUNT.changes(exec, [amount, tokens, request.accountId]);
      return refuse(exec, r, { code: budgets[verdict.index]!.code, figures: verdict.figures });
    }
  }

  // The traffic limits (traffic-limits.ts) after the money checks: a 402 is final, a 429 only says "later".
  let traffic: string | null = null;
  let status: TrafficStatus | null = null;
  const limits = request.limits;
  if (limits !== undefined && limits.length > 0) {
    // Judged and counted in the transaction's traffic windows (traffic-windows-sqlite.ts), written before COMMIT.
    const verdict = trafficWindows(exec).admit(exec, limits, r.now, r.tokens);
    if ("refusal" in verdict) {
      UNRESERVE_KEY.changes(exec, [amount, tokens, request.keyId]);
      UNRESERVE_ACCOUNT.changes(exec, [amount, tokens, request.accountId]);
      return trafficRefusalError(limits[verdict.refusal.index]!, verdict.refusal, r.now, request.route === "messages");
    }
    traffic = trafficRecordOf(limits, verdict.next, r.tokens);
    status = trafficStatus(limits, verdict.next, r.now);
  }

  if (scopes !== null) holdInBudgetsSqlite(exec, scopes, month, amount, tokens);
  INSERT_HOLD.changes(exec, [
    r.holdId,
    request.accountId,
    request.keyId,
    request.requestId,
    amount,
    tokens,
    BigInt(r.now),
    BigInt(r.now + r.ttlMs),
    traffic,
    scopes === null ? null : JSON.stringify(scopes),
    request.tags !== undefined && request.tags.length > 0 ? JSON.stringify(request.tags) : null,
    r.holder,
  ]);
  return status;
}

/** The refusal as an error; a clampable one carries the headroom, read in the same transaction after the reservation was taken back. */
function refuse(exec: SqlExec, r: AdmissionCore, refusal: Refusal): GatewayError {
  const headroom = CLAMPABLE_REFUSALS.has(refusal.code) ? headroomOf(exec, r) : null;
  return refusalError({ ...refusal, headroom }, r.month, r.amount, r.now);
}

/** The key's current period counters: 0 when they belong to an earlier period (or the key has none). */
function periodUse(key: KeyRow, periods: PeriodStarts): { spent: bigint; tokens: bigint } {
  const start = key.period === "day" ? periods.day : key.period === "week" ? periods.week : periods.month;
  if (key.period === null || key.period_started_at < start) return { spent: 0n, tokens: 0n };
  return { spent: key.period_spent_nano, tokens: key.period_tokens_used };
}

/** Every limit's headroom, or null when the account or key does not allow clamping (or cannot be served at all). */
function headroomOf(exec: SqlExec, r: AdmissionCore): Headroom | null {
  const { request, month } = r;
  const account = ACCOUNT_ROW.first(exec, [request.accountId]);
  const key = KEY_ROW.first(exec, [request.keyId]);
  if (!account || account.status !== "active" || account.clamp_output !== 1n) return null;
  if (!key || key.account_id !== request.accountId || key.status !== "enabled" || key.clamp_output !== 1n) return null;
  const budgets = account.monthly_budget_nano !== null || account.monthly_token_budget !== null;
  const used = budgets ? monthUsage(exec, request.accountId, month) : { cost: 0n, tokens: 0n };
  return {
    balance: account.balance_nano - account.held_nano,
    monthCost: account.monthly_budget_nano === null ? null : account.monthly_budget_nano - used.cost - account.held_nano,
    monthTokens: account.monthly_token_budget === null ? null : account.monthly_token_budget - used.tokens - account.held_tokens,
    keyCost: key.budget_cap_nano === null ? null : key.budget_cap_nano - key.spent_nano - key.held_nano,
    keyTokens: key.token_cap === null ? null : key.token_cap - key.tokens_used - key.held_tokens,
    ...periodHeadroom(key, r.periods),
    ...budgetRoom(exec, r),
  };
}

function budgetRoom(exec: SqlExec, r: AdmissionCore): Pick<Headroom, "budgetCost" | "budgetTokens"> {
  const budgets = r.request.budgets;
  if (budgets === undefined || budgets.length === 0) return { budgetCost: null, budgetTokens: null };
  return budgetHeadroom(budgets, budgetCountersSqlite(exec, budgetScopesOf(budgets)), r.month);
}

function periodHeadroom(key: KeyRow, periods: PeriodStarts): Pick<Headroom, "periodCost" | "periodTokens"> {
  const use = periodUse(key, periods);
  const has = key.period !== null;
  return {
    periodCost: has && key.period_budget_nano !== null ? key.period_budget_nano - use.spent - key.held_nano : null,
    periodTokens: has && key.period_token_cap !== null ? key.period_token_cap - use.tokens - key.held_tokens : null,
  };
}

function monthUsage(exec: SqlExec, accountId: string, month: string): { cost: bigint; tokens: bigint } {
  const row = MONTH_USAGE.first(exec, [accountId, month]);
  return { cost: row?.cost_nano ?? 0n, tokens: row?.tokens ?? 0n };
}

function diagnoseAccount(exec: SqlExec, accountId: string, amount: Nano, tokens: bigint, month: string): Refusal {
  const row = ACCOUNT_ROW.first(exec, [accountId]);
  if (!row) return { code: "no_account" };
  if (row.status !== "active") return { code: "account_suspended", detail: row.status };
  if (row.monthly_budget_nano !== null || row.monthly_token_budget !== null) {
    const used = monthUsage(exec, accountId, month);
    if (
      (row.monthly_budget_nano !== null && used.cost + row.held_nano + amount > row.monthly_budget_nano) ||
      (row.monthly_token_budget !== null && used.tokens + row.held_tokens + tokens > row.monthly_token_budget)
    ) {
      return { code: "monthly_budget_exceeded" };
    }
  }
  return { code: "insufficient_balance", detail: row.balance_nano - row.held_nano };
}

function diagnoseKey(exec: SqlExec, r: AdmissionCore, amount: Nano, tokens: bigint): Refusal {
  const { request } = r;
  const row = KEY_ROW.first(exec, [request.keyId]);
  if (!row || row.account_id !== request.accountId || row.status === "revoked") return { code: "auth_error" };
  if (row.status === "exhausted") {
    if (row.budget_cap_nano !== null && row.spent_nano >= row.budget_cap_nano) return { code: "key_budget_exceeded" };
    if (row.token_cap !== null && row.tokens_used >= row.token_cap) return { code: "key_token_cap_exceeded" };
    return { code: "key_budget_exceeded" };
  }
  if (row.budget_cap_nano !== null && row.spent_nano + row.held_nano + amount > row.budget_cap_nano) return { code: "key_budget_exceeded" };
  if (row.token_cap !== null && row.tokens_used + row.held_tokens + tokens > row.token_cap) return { code: "key_token_cap_exceeded" };
  if (row.period !== null) {
    const use = periodUse(row, r.periods);
    if (row.period_budget_nano !== null && use.spent + row.held_nano + amount > row.period_budget_nano) return { code: "key_period_budget_exceeded", detail: row.period };
    if (row.period_token_cap !== null && use.tokens + row.held_tokens + tokens > row.period_token_cap) return { code: "key_period_token_cap_exceeded", detail: row.period };
  }
  return { code: "key_budget_exceeded" };
}
