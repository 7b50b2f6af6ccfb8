// Admission: check and reserve in ONE transaction, before anything is forwarded upstream.
//
// Order of checks (the first failing one decides the error; 1-7 are 402, 8 is 429):
//   1. account status is not active                                  -> account_suspended
//   2. monthly budget (USD and/or tokens) for the current UTC month:
//      month's settled cost + held + projected > monthly budget      -> quota_exceeded (code monthly_budget_exceeded)
//   3. balance - held < projected cost                               -> quota_exceeded (code insufficient_balance)
//   4. key exhausted, or spent + held + projected cost > budget_cap  -> key_budget_exceeded
//   5. key exhausted, or tokens_used + held + projected > token_cap  -> key_token_cap_exceeded
//      (an exhausted key reports the cap it actually reached; a revoked or unknown key is auth_error)
//   6. the key's periodic budget (migration 0013, ADR 0017): the current period's spend (0 when the
//      counters belong to an earlier period) + held + projected > period budget
//                                                                   -> key_budget_exceeded (code key_period_budget_exceeded)
//      and the same for tokens                                      -> key_token_cap_exceeded (code key_period_token_cap_exceeded)
//      The key stays enabled: the refusal lasts until the period resets, which its message names.
//      The current period's start comes with the reservation (periodStarts, key-period.ts: one of
//      each kind; the database picks the key's), so no clock is read inside the database.
//   7. the budget scopes that apply (core/budget-scopes.ts; ADR 0037): a workspace key's workspace
//      budget (USD and tokens), then its member budget (USD), each for the current UTC month:
//      month's settled cost + held + projected > budget, or nothing left (settled + held >= budget)
//                                                                   -> workspace_budget_exceeded / member_budget_exceeded
//      and the budgets on the request's tags (core/request-tags.ts)   -> tag_budget_exceeded
//      Their rows (budget_usage) are read and written in the same transaction, under SQLite's
//      single writer or, on PostgreSQL, under row locks gw_batch takes in scope order before any
//      account row (a workspace's keys belong to several accounts, so the account lock does not cover it).
//   8. the rate and concurrency limits that apply (traffic-limits.ts), key, key per model, account,
//      account per model, each rpm, tpm, concurrency -> rate_limit_error (code <subject>_<kind>_exceeded)
//      After the money checks: a 402 does not go away by waiting, so a client is never told to retry
//      a request its balance or caps refuse anyway. Only the scopes with a limit are read and written.
//
// Why conditional UPDATEs and not read-then-write: the check and the reservation are one atomic
// statement per row, so concurrent requests, also from other gateway processes on one PostgreSQL,
// can never together reserve more than the balance or a cap allows. The account row is always locked
// first and the key row second (settlement and release use the same order: no deadlocks).
// The monthly figures live in another table (monthly_usage), which a PostgreSQL UPDATE's re-check
// under READ COMMITTED would see through a stale snapshot; so the account row is locked first and
// monthly_usage is read by a later statement, which sees every settlement that committed before the lock.
// When a conditional UPDATE matches nothing, a plain read tells which condition failed; the
// transaction is rolled back, so a refusal changes nothing.
//
// Two implementations of the same checks, one per database (this file holds what they share: the
// refusal codes and their messages, and the Hold they return):
// - admission-sqlite.ts: the statements above as precompiled SQL text (no query builder on the request
//   path; better-sqlite3 statements are cached by SQL text), run by the write batcher (sqlite-writer.ts).
// - admission-postgres.ts: one call of the PL/pgSQL function gw_admit (migration 0002), which locks the
//   account row then the key row with SELECT ... FOR UPDATE, checks in the order above and writes only
//   when every check passed: one round trip, the row locks held for one function call.
// Both produce a Refusal (code + detail) that refusalError() below turns into the GatewayError.
//
// Clamping (clamping.ts, docs/billing.md): a refusal by one of the money or token limits
// (monthly budget, balance, key budget cap, key token cap, key periodic budget) also carries the Headroom of every limit,
// read under the same locks, when the account and the key allow clamping (clamp_output, migration
// 0009). The caller may then admit again with a lower output projection; that admission is checked
// atomically like every other, so the headroom is only a hint and never a promise.
import { formatUsd, type Nano } from "../core/money.js";
import { accountSuspended, GatewayError } from "../errors/catalogue.js";
import type { KeyPeriod } from "../store/tables.js";
import { KEY_PERIODS, nextPeriodStart, type PeriodStarts } from "./key-period.js";
import type { TrafficStatus } from "../core/rate-limit-headers.js";
import type { BudgetCode, BudgetFigures, BudgetLimit } from "../core/budget-scopes.js";
import type { AdmissionRequest, Hold } from "./types.js";

export interface Reservation {
  request: AdmissionRequest;
  /** The new hold's id (newId("hold")). */
  holdId: string;
  amount: Nano;
  tokens: number;
  now: number;
  ttlMs: number;
  /** The admitting process's liveness row (process-liveness.ts), written on the hold; null: the hold ends at its expiry only. */
  holder: string | null;
  /** monthOf(now), the UTC month the monthly budget is judged for. */
  month: string;
  /** periodStarts(now): the current window of each kind, for the key's periodic budget. */
  periods: PeriodStarts;
}

/** A reservation without the request's model config: what admission's statements read, and what travels to the SQLite writer owner (ADR 0047). */
export type AdmissionCore = Omit<Reservation, "request"> & {
  request: Pick<AdmissionRequest, "requestId" | "accountId" | "keyId" | "route" | "limits" | "budgets" | "tags">;
};

/** Why admission refused, as both implementations report it; see refusalError(). */
export type RefusalCode =
  | "no_account"
  | "account_suspended"
  | "monthly_budget_exceeded"
  | "insufficient_balance"
  | "auth_error"
  | "key_budget_exceeded"
  | "key_token_cap_exceeded"
  | "key_period_budget_exceeded"
  | "key_period_token_cap_exceeded"
  | "workspace_budget_exceeded"
  | "member_budget_exceeded"
  | "tag_budget_exceeded";

export interface Refusal {
  code: RefusalCode;
  /** account_suspended: the account status; insufficient_balance: balance - held in nano-USD; key_period_*: the key's period. */
  detail?: string | bigint | null;
  /** What each limit still allows; only on a refusal by a money or token limit, and only when clamping is allowed. */
  headroom?: Headroom | null;
  /** workspace_ and member_budget_exceeded: the refusing budget's figures, read under the same locks. */
  figures?: BudgetFigures | null;
}

/**
 * What each limit of an admission still allows at the moment it refused, with what is held already
 * deducted (negative when a limit is overdrawn by holds); null: the account or key has no such limit.
 */
export interface Headroom {
  /** balance - held, nano-USD. */
  balance: Nano;
  /** monthly budget - (month's settled cost + held), nano-USD. */
  monthCost: Nano | null;
  /** monthly token budget - (month's settled tokens + held tokens). */
  monthTokens: bigint | null;
  /** key budget cap - (spent + held), nano-USD. */
  keyCost: Nano | null;
  /** key token cap - (tokens used + held tokens). */
  keyTokens: bigint | null;
  /** key periodic budget - (the current period's spend + held), nano-USD. */
  periodCost: Nano | null;
  /** key periodic token cap - (the current period's tokens + held tokens). */
  periodTokens: bigint | null;
  /** The least of the budget scopes' USD room (budget - (month's settled cost + held)), nano-USD. */
  budgetCost: Nano | null;
  /** The least of the budget scopes' token room. */
  budgetTokens: bigint | null;
}

/** The refusals a lower output projection may turn into an admission. */
export const CLAMPABLE_REFUSALS: ReadonlySet<RefusalCode> = new Set<RefusalCode>([
  "monthly_budget_exceeded",
  "insufficient_balance",
  "key_budget_exceeded",
  "key_token_cap_exceeded",
  "key_period_budget_exceeded",
  "key_period_token_cap_exceeded",
  "workspace_budget_exceeded",
  "member_budget_exceeded",
  "tag_budget_exceeded",
]);

/** A refusal by a money or token limit, with the headroom of every limit when clamping is allowed. */
export class LimitRefusal extends GatewayError {
  constructor(
    base: GatewayError,
    readonly headroom: Headroom | null,
  ) {
    super(base.type, base.message, base.details);
  }
}

const REFUSAL_CODES: ReadonlySet<string> = new Set<RefusalCode>([
  "no_account",
  "account_suspended",
  "monthly_budget_exceeded",
  "insufficient_balance",
  "auth_error",
  "key_budget_exceeded",
  "key_token_cap_exceeded",
  "key_period_budget_exceeded",
  "key_period_token_cap_exceeded",
  "workspace_budget_exceeded",
  "member_budget_exceeded",
  "tag_budget_exceeded",
]);

export function isRefusalCode(value: string): value is RefusalCode {
  return REFUSAL_CODES.has(value);
}

/** The GatewayError (type, message, details.code) a refusal surfaces as; a LimitRefusal for the clampable ones. */
export function refusalError(refusal: Refusal, month: string, amount: Nano, now: number): GatewayError {
  const error = baseRefusalError(refusal, month, amount, now);
  return CLAMPABLE_REFUSALS.has(refusal.code) ? new LimitRefusal(error, refusal.headroom ?? null) : error;
}

function baseRefusalError(refusal: Refusal, month: string, amount: Nano, now: number): GatewayError {
  switch (refusal.code) {
    case "no_account":
      return new GatewayError("auth_error", "The key's account does not exist.");
    case "account_suspended":
      return accountSuspended(String(refusal.detail));
    case "monthly_budget_exceeded":
      return monthlyBudgetError(month);
    case "insufficient_balance": {
      const available = BigInt(refusal.detail ?? 0n);
      return new GatewayError(
        "quota_exceeded",
        `The balance available (${formatUsd(available > 0n ? available : 0n)} USD) does not cover this request's projected cost of ${formatUsd(amount)} USD.`,
        { code: "insufficient_balance" },
      );
    }
    case "auth_error":
      return new GatewayError("auth_error");
    case "key_budget_exceeded":
      return new GatewayError("key_budget_exceeded");
    case "key_token_cap_exceeded":
      return new GatewayError("key_token_cap_exceeded");
    case "key_period_budget_exceeded":
    case "key_period_token_cap_exceeded": {
      const period = KEY_PERIODS.find((p) => p === refusal.detail) ?? "day";
      const what = refusal.code === "key_period_budget_exceeded" ? "budget" : "token cap";
      return new GatewayError(
        refusal.code === "key_period_budget_exceeded" ? "key_budget_exceeded" : "key_token_cap_exceeded",
        `This request would exceed the key's ${PERIOD_WORD[period]} ${what} (the key's policy). It resets at ${new Date(nextPeriodStart(period, now)).toISOString()}.`,
        { code: refusal.code },
      );
    }
    case "workspace_budget_exceeded":
    case "member_budget_exceeded":
    case "tag_budget_exceeded":
      return budgetError(refusal.code, refusal.figures ?? null, month, amount);
  }
}

/** A budget scope's refusal, with the figures that refused it (ADR 0037). */
function budgetError(code: BudgetCode, figures: BudgetFigures | null, month: string, amount: Nano): GatewayError {
  const whose =
    code === "workspace_budget_exceeded"
      ? "the workspace's monthly budget"
      : code === "member_budget_exceeded"
        ? "your monthly budget as a member of this workspace"
        : `the monthly budget on the tag ${tagOfScope(figures?.scope)}`;
  const parts: string[] = [];
  if (figures?.costLimit != null) {
    parts.push(
      `the budget is ${formatUsd(figures.costLimit)} USD with ${formatUsd(figures.cost)} USD spent and ${formatUsd(figures.held)} USD held for requests in flight, and this request needs up to ${formatUsd(amount)} USD`,
    );
  }
  if (figures?.tokenLimit != null) {
    parts.push(`the token budget is ${figures.tokenLimit} with ${figures.tokens} used and ${figures.heldTokens} held`);
  }
  const detail = parts.length === 0 ? "" : ` In ${month} (UTC) ${parts.join("; ")}.`;
  return new GatewayError(code, `This request would exceed ${whose}.${detail} It resets at ${nextMonthStart(month)}.`, { code });
}

const PERIOD_WORD: Record<KeyPeriod, string> = { day: "daily", week: "weekly", month: "monthly" };

/** The Hold admission returns once the reservation is written; `traffic`: the rate limits' figures, when a limit applied. */
export function holdOf(r: Reservation, traffic: TrafficStatus | null = null): Hold {
  const { request } = r;
  return {
    id: r.holdId,
    requestId: request.requestId,
    accountId: request.accountId,
    keyId: request.keyId,
    amount: r.amount,
    tokens: r.tokens,
    model: request.model,
    route: request.route,
    ...(request.imageVariant !== undefined && { imageVariant: request.imageVariant }),
    ...(traffic !== null && { traffic }),
    ...(request.budgets !== undefined && request.budgets.length > 0 && { budgets: budgetScopesOf(request.budgets) }),
    ...(request.tags !== undefined && request.tags.length > 0 && { tags: request.tags }),
  };
}

const scopeNames = new WeakMap<readonly BudgetLimit[], readonly string[]>();

/** The scope names of a list of budget limits, built once per list (the request path reuses one per key). */
export function budgetScopesOf(budgets: readonly BudgetLimit[]): readonly string[] {
  let names = scopeNames.get(budgets);
  if (names === undefined) scopeNames.set(budgets, (names = budgets.map((b) => b.scope)));
  return names;
}

/** The "key=value" of a tag budget's scope ("tag:k=v" or "tag@<account>:k=v"). */
function tagOfScope(scope: string | undefined): string {
  if (scope === undefined) return "of this request";
  return scope.startsWith("tag@") ? scope.slice(scope.indexOf(":") + 1) : scope.slice("tag:".length);
}

/** The first day of the month after `month` ("YYYY-MM"), as an ISO timestamp in UTC. */
export function nextMonthStart(month: string): string {
  const [year, mon] = month.split("-").map(Number) as [number, number];
  return new Date(Date.UTC(year, mon, 1)).toISOString();
}

function monthlyBudgetError(month: string): GatewayError {
  return new GatewayError(
    "quota_exceeded",
    `The account's monthly budget for ${month} (UTC) is used up. Requests are blocked until the next month begins at ${nextMonthStart(month)}.`,
    { code: "monthly_budget_exceeded" },
  );
}
