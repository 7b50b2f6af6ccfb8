// Admission on PostgreSQL: one admit operation of gw_batch (src/store/gw-batch-function.ts, its fields
// named there), sent in a group-commit batch by postgres-batcher.ts (one statement, autocommit). The
// function locks the account row then the key row (FOR UPDATE, the lock order of admission.ts), checks
// in the documented order and writes the reservation and the holds row only when every check passed;
// a refusal writes nothing. It answers 'ok' or a refusal code, which becomes the same GatewayError as on SQLite
// (refusalError in admission.ts), with the headroom gw_batch read under its locks.
import { budgetScopesOf, holdOf, isRefusalCode, refusalError, type Headroom, type Reservation } from "./admission.js";
import { pgPeriods, type PgAnswer, type PgField, type PostgresBatcher } from "./postgres-batcher.js";
import type { BudgetFigures, BudgetLimit } from "../core/budget-scopes.js";
import { trafficRefusalError, trafficStatus, type TrafficLimit, type WindowCounts } from "../core/traffic-limits.js";
import type { Hold } from "./types.js";

const limitFields = new WeakMap<readonly TrafficLimit[], string>();

/**
 * The limits field of an admit operation, as gw_batch's trafficAdmit reads it: JSON text of [{scope,
 * rpm, tpm, concurrency}], null for an unset figure. Text, built once per list (the request path
 * reuses one list per key and model, pipeline/traffic.ts): gw_batch compares it with the previous
 * admission's text and parses it only when it differs.
 */
export function limitsField(limits: readonly TrafficLimit[]): string {
  let field = limitFields.get(limits);
  if (field === undefined) {
    field = JSON.stringify(limits.map((l) => ({ scope: l.scope, rpm: l.requestsPerMinute, tpm: l.tokensPerMinute, concurrency: l.concurrentRequests })));
    limitFields.set(limits, field);
  }
  return field;
}

const budgetFields = new WeakMap<readonly BudgetLimit[], PgField>();

/** The scope_limits field of an admit operation: per scope [cost limit, token limit, refusal code]; built once per list. */
function scopeLimitsField(budgets: readonly BudgetLimit[]): PgField {
  let field = budgetFields.get(budgets);
  if (field === undefined) {
    field = budgets.map((b) => [b.costLimit === null ? null : b.costLimit.toString(), b.tokenLimit === null ? null : b.tokenLimit.toString(), b.code]);
    budgetFields.set(budgets, field);
  }
  return field;
}

/** `observe` sees gw_batch's answer before it is read (the escrow reads whether the account and key are plain, and recalls). */
export async function reservePostgres(batcher: PostgresBatcher, r: Reservation, observe?: (answer: PgAnswer) => void): Promise<Hold> {
  const { request, amount, month } = r;
  const limits = request.limits !== undefined && request.limits.length > 0 ? request.limits : null;
  const budgets = request.budgets !== undefined && request.budgets.length > 0 ? request.budgets : null;
  const row = await batcher.call(
    {
      k: "admit",
      account: request.accountId,
      key: request.keyId,
      request: request.requestId,
      hold: r.holdId,
      amount: amount.toString(),
      tokens: BigInt(r.tokens).toString(),
      month,
      now: BigInt(r.now).toString(),
      expires: BigInt(r.now + r.ttlMs).toString(),
      periods: pgPeriods(r.periods),
      ...(limits !== null && { limits: limitsField(limits) }),
      ...(budgets !== null && { scopes: budgetScopesOf(budgets), scope_limits: scopeLimitsField(budgets) }),
      ...(request.tags !== undefined && request.tags.length > 0 && { tags: request.tags }),
      ...(r.holder !== null && { holder: r.holder }),
    },
    request.accountId,
    request.keyId,
  );
  observe?.(row);
  const { outcome, detail } = row;
  if (outcome === "ok") return holdOf(r, limits === null ? null : trafficStatus(limits, windowsOf(row.windows, limits.length), r.now));
  if (outcome === "traffic_limited" && limits !== null) {
    const verdict = row.traffic as { refused?: unknown; kind?: unknown; window?: unknown } | null;
    const index = Number(verdict?.refused);
    const limit = limits[index];
    const kind = verdict?.kind;
    if (!limit || (kind !== "rpm" && kind !== "tpm" && kind !== "concurrency")) throw new Error(`gw_admit answered a traffic verdict of ${JSON.stringify(verdict)}`);
    throw trafficRefusalError(limit, { index, kind, window: windowsOf([verdict?.window], 1)[0]! }, r.now, request.route === "messages");
  }
  if (typeof outcome === "string" && isRefusalCode(outcome)) {
    throw refusalError(
      { code: outcome, detail: typeof detail === "string" ? detail : null, headroom: headroomOf(row.headroom), figures: figuresOf(row.figures) },
      month,
      amount,
      r.now,
    );
  }
  throw new Error(`gw_admit answered ${JSON.stringify(outcome)}`);
}

/** gw_batch's counted windows (trafficAdmit in traffic-functions.ts) ([window_start, requests, tokens, in_flight] each, in the limits' order). */
function windowsOf(value: unknown, count: number): WindowCounts[] {
  if (!Array.isArray(value) || value.length !== count) throw new Error(`gw_admit answered traffic windows of ${JSON.stringify(value)}`);
  return value.map((w: unknown) => {
    const [windowStart, requests, tokens, inFlight] = (Array.isArray(w) ? w : []).map(Number);
    return { windowStart: windowStart ?? 0, requests: requests ?? 0, tokens: tokens ?? 0, inFlight: inFlight ?? 0 };
  });
}

/** gw_batch's headroom object (every figure as decimal text, null: no such limit) as a Headroom. */
function headroomOf(value: unknown): Headroom | null {
  if (value === null || typeof value !== "object") return null;
  const figures = value as Record<string, unknown>;
  const figure = (name: string): bigint | null => {
    const text = figures[name];
    if (text === null || text === undefined) return null;
    if (typeof text !== "string" || !/^-?\d+$/.test(text)) throw new Error(`gw_admit answered a headroom ${name} of ${JSON.stringify(text)}`);
    return BigInt(text);
  };
  const balance = figure("balance");
  if (balance === null) throw new Error("gw_admit answered a headroom without the balance");
  return {
    balance,
    monthCost: figure("month_cost"),
    monthTokens: figure("month_tokens"),
    keyCost: figure("key_cost"),
    keyTokens: figure("key_tokens"),
    periodCost: figure("period_cost"),
    periodTokens: figure("period_tokens"),
    budgetCost: figure("budget_cost"),
    budgetTokens: figure("budget_tokens"),
  };
}

/** gw_batch's figures of a refusing budget (decimal text, null: not limited) as BudgetFigures; null when absent. */
function figuresOf(value: unknown): BudgetFigures | null {
  if (value === null || typeof value !== "object") return null;
  const f = value as Record<string, unknown>;
  const big = (name: string): bigint | null => (typeof f[name] === "string" && /^-?\d+$/.test(f[name]) ? BigInt(f[name]) : null);
  return {
    ...(typeof f.scope === "string" && { scope: f.scope }),
    costLimit: big("cost_limit"),
    tokenLimit: big("token_limit"),
    cost: big("cost") ?? 0n,
    tokens: big("tokens") ?? 0n,
    held: big("held") ?? 0n,
    heldTokens: big("held_tokens") ?? 0n,
  };
}
