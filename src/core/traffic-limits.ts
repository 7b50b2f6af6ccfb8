// Rate and concurrency limits (docs/billing.md, "Rate and concurrency limits"; ADRs 0016 and 0029): requests per
// minute, tokens per minute and requests in flight, per key and per account, each optionally per model.
// A tier's defaults come from the config (tiers.<tier>.limits); a key or an account may set its own
// values (the `limits` JSON column, migration 0012), which replace the tier's field by field.
//
// Counting: one row of traffic_windows per limited scope. A window lasts WINDOW_MS from the first
// admission after the previous window ended (a fixed window anchored at its first request, so "60
// admitted per window" is exact and deterministic); requests and tokens count the admissions of the
// current window, in_flight the holds not yet ended. The check and the count are part of the
// admission (admission-sqlite.ts, trafficAdmit in migrations/traffic-functions.ts), and a refusal
// changes no counter: both judge in memory, each scope's row read at most once (SQLite per write
// transaction, traffic-windows-sqlite.ts; PostgreSQL per gw_batch call, traffic-functions.ts) and
// written once at its end. A scope without a limit is never read nor written: with no limit
// configured admission runs exactly the statements it ran before.
//
// The hold records what its admission counted (holds.traffic, TrafficRecord): whoever ends the hold
// (settlement, release, the expiry sweeper) decrements in_flight of each scope, and corrects the
// window's tokens from the projection to the actual count (0 for a release) when that window is still
// the one the admission counted in; a later window is left alone (the projection stays counted in the
// window it was admitted in, which has ended).
//
// This file holds what both databases share: the limit shapes and their validation, which limits
// apply to a request, the judgement on SQLite, the refusal errors and the response headers' figures
// (the headers themselves: rate-limit-headers.ts).
import { z } from "zod";
import { GatewayError } from "../errors/catalogue.js";
import { rateLimitHeaders, type TrafficStatus, type WindowFigures } from "./rate-limit-headers.js";

/** A window's length: requests and tokens are limited per minute. */
export const WINDOW_MS = 60_000;
/** What a refusal by a concurrency limit sends as Retry-After: a slot frees when another request ends, which nothing predicts. */
export const CONCURRENCY_RETRY_AFTER_SECONDS = 1;

const MAX_REQUESTS_PER_MINUTE = 10_000_000;
const MAX_TOKENS_PER_MINUTE = 1_000_000_000_000;
const MAX_CONCURRENT_REQUESTS = 1_000_000;
/** Models with their own limits, per subject: a bound on the JSON a key or account may carry. */
const MAX_MODEL_ENTRIES = 256;

/** One subject's limits as written in the config and the API (snake_case), every field optional. */
export const limitSetSchema = z.strictObject({
  requests_per_minute: z.number().int().min(1).max(MAX_REQUESTS_PER_MINUTE).optional(),
  tokens_per_minute: z.number().int().min(1).max(MAX_TOKENS_PER_MINUTE).optional(),
  concurrent_requests: z.number().int().min(1).max(MAX_CONCURRENT_REQUESTS).optional(),
});

const modelIdSchema = z.string().min(1).max(256);
const modelCountCheck = (models: Record<string, unknown> | undefined) => models === undefined || Object.keys(models).length <= MAX_MODEL_ENTRIES;

/** A key's or an account's own limits (keys.limits, accounts.limits): the set, and a set per model. */
export const subjectLimitsSchema = limitSetSchema.extend({
  models: z.record(modelIdSchema, limitSetSchema).optional().refine(modelCountCheck, `at most ${MAX_MODEL_ENTRIES} models`),
});

/** tiers.<tier>.limits: the defaults for every key and every account of the tier. */
export const tierLimitsSchema = z.strictObject({
  key: limitSetSchema.optional(),
  account: limitSetSchema.optional(),
  models: z
    .record(modelIdSchema, z.strictObject({ key: limitSetSchema.optional(), account: limitSetSchema.optional() }))
    .optional()
    .refine(modelCountCheck, `at most ${MAX_MODEL_ENTRIES} models`),
});

export type LimitSetInput = z.infer<typeof limitSetSchema>;
export type SubjectLimitsInput = z.infer<typeof subjectLimitsSchema>;
export type TierLimitsInput = z.infer<typeof tierLimitsSchema>;

/** A subject's limits as admission reads them; null: no such limit. */
export interface LimitSet {
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  concurrentRequests: number | null;
}

export interface SubjectLimits extends LimitSet {
  models: ReadonlyMap<string, LimitSet>;
}

export interface TierLimits {
  key: LimitSet;
  account: LimitSet;
  models: ReadonlyMap<string, { key: LimitSet; account: LimitSet }>;
}

/** Who a limit belongs to; the refusal codes are named after it (key_rpm_exceeded, account_model_tpm_exceeded, ...). */
export type LimitSubject = "key" | "account" | "key_model" | "account_model";

/** One limit that applies to a request: its counter's scope and its figures (at least one set). */
export interface TrafficLimit extends LimitSet {
  scope: string;
  subject: LimitSubject;
}

/** One scope's counters as stored. */
export interface WindowCounts {
  windowStart: number;
  requests: number;
  tokens: number;
  inFlight: number;
}

/** What an admission counted, stored with its hold (holds.traffic) as JSON: the tokens and [scope, window start] pairs. */
export interface TrafficRecord {
  t: number;
  w: [string, number][];
}

const NO_LIMITS: LimitSet = { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null };
export const NO_TIER_LIMITS: TierLimits = { key: NO_LIMITS, account: NO_LIMITS, models: new Map() };

function limitSetOf(input: LimitSetInput | undefined): LimitSet {
  return {
    requestsPerMinute: input?.requests_per_minute ?? null,
    tokensPerMinute: input?.tokens_per_minute ?? null,
    concurrentRequests: input?.concurrent_requests ?? null,
  };
}

export function tierLimitsOf(input: TierLimitsInput | undefined): TierLimits {
  if (!input) return NO_TIER_LIMITS;
  const models = new Map<string, { key: LimitSet; account: LimitSet }>();
  for (const [id, entry] of Object.entries(input.models ?? {})) models.set(id, { key: limitSetOf(entry.key), account: limitSetOf(entry.account) });
  return { key: limitSetOf(input.key), account: limitSetOf(input.account), models };
}

/** A subject's limits from its stored JSON (null: none of its own). A stored value that does not parse is treated as none. */
export function subjectLimitsOf(json: string | null): SubjectLimits | null {
  if (json === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return null;
  }
  const result = subjectLimitsSchema.safeParse(parsed);
  return result.success ? subjectLimitsFromInput(result.data) : null;
}

export function subjectLimitsFromInput(input: SubjectLimitsInput): SubjectLimits {
  const models = new Map<string, LimitSet>();
  for (const [id, entry] of Object.entries(input.models ?? {})) models.set(id, limitSetOf(entry));
  return { ...limitSetOf(input), models };
}

/** The JSON a subject's limits are stored and shown as (snake_case, only the fields set); null for none. */
export function subjectLimitsJson(limits: SubjectLimits | null): SubjectLimitsInput | null {
  if (!limits) return null;
  const out: SubjectLimitsInput = limitSetJson(limits);
  if (limits.models.size > 0) out.models = Object.fromEntries([...limits.models].map(([id, set]) => [id, limitSetJson(set)]));
  return out;
}

/** The stored column for limits given through the API (validated by subjectLimitsSchema): canonical JSON, null for none. */
export function limitsColumn(input: SubjectLimitsInput | null): string | null {
  if (input === null) return null;
  const json = subjectLimitsJson(subjectLimitsFromInput(subjectLimitsSchema.parse(input)));
  return json === null || Object.keys(json).length === 0 ? null : JSON.stringify(json);
}

export function limitSetJson(set: LimitSet): LimitSetInput {
  const out: LimitSetInput = {};
  if (set.requestsPerMinute !== null) out.requests_per_minute = set.requestsPerMinute;
  if (set.tokensPerMinute !== null) out.tokens_per_minute = set.tokensPerMinute;
  if (set.concurrentRequests !== null) out.concurrent_requests = set.concurrentRequests;
  return out;
}

function merge(base: LimitSet | undefined, own: LimitSet | undefined): LimitSet {
  return {
    requestsPerMinute: own?.requestsPerMinute ?? base?.requestsPerMinute ?? null,
    tokensPerMinute: own?.tokensPerMinute ?? base?.tokensPerMinute ?? null,
    concurrentRequests: own?.concurrentRequests ?? base?.concurrentRequests ?? null,
  };
}

function isSet(set: LimitSet): boolean {
  return set.requestsPerMinute !== null || set.tokensPerMinute !== null || set.concurrentRequests !== null;
}

export interface LimitSubjects {
  keyId: string;
  accountId: string;
  keyLimits: SubjectLimits | null;
  accountLimits: SubjectLimits | null;
}

/** The subjects of a key and its account as loaded (ApiKey and Account both carry `limits`). */
export function limitSubjectsOf(principal: { key: { id: string; limits: SubjectLimits | null }; account: { id: string; limits: SubjectLimits | null } }): LimitSubjects {
  return { keyId: principal.key.id, accountId: principal.account.id, keyLimits: principal.key.limits, accountLimits: principal.account.limits };
}

/**
 * The limits that apply to a request for `modelId` (the id the client asked for), in the order they
 * are judged: key, key per model, account, account per model. Empty when none is configured.
 */
export function applicableLimits(tier: TierLimits, subjects: LimitSubjects, modelId: string): TrafficLimit[] {
  const { keyLimits, accountLimits } = subjects;
  const tierModel = tier.models.get(modelId);
  const candidates: TrafficLimit[] = [
    { scope: `key:${subjects.keyId}`, subject: "key", ...merge(tier.key, keyLimits ?? undefined) },
    { scope: `key:${subjects.keyId}|model:${modelId}`, subject: "key_model", ...merge(tierModel?.key, keyLimits?.models.get(modelId)) },
    { scope: `account:${subjects.accountId}`, subject: "account", ...merge(tier.account, accountLimits ?? undefined) },
    { scope: `account:${subjects.accountId}|model:${modelId}`, subject: "account_model", ...merge(tierModel?.account, accountLimits?.models.get(modelId)) },
  ];
  return candidates.filter(isSet);
}

/**
 * Every limit that applies to a key, for showing (GET /v1/me, the dashboard): the key's and the
 * account's, then those of each model any of them names (the tier's, the key's or the account's).
 */
export function limitsOverview(tier: TierLimits, subjects: LimitSubjects): { model: string | null; limit: TrafficLimit }[] {
  const models = new Set<string>([...tier.models.keys(), ...(subjects.keyLimits?.models.keys() ?? []), ...(subjects.accountLimits?.models.keys() ?? [])]);
  const out: { model: string | null; limit: TrafficLimit }[] = [];
  const base = applicableLimits(tier, subjects, "");
  for (const limit of base) if (limit.subject === "key" || limit.subject === "account") out.push({ model: null, limit });
  for (const model of [...models].sort()) {
    for (const limit of applicableLimits(tier, subjects, model)) if (limit.subject === "key_model" || limit.subject === "account_model") out.push({ model, limit });
  }
  return out;
}

export type LimitKind = "rpm" | "tpm" | "concurrency";

/** Why the traffic limits refused: which limit (its index in the list judged), which figure, and when its window ends. */
export interface TrafficRefusal {
  index: number;
  kind: LimitKind;
  /** The refusing scope's counters as judged (its window's start, requests, tokens and requests in flight). */
  window: WindowCounts;
}

/** The counters a scope starts the admission with: a new window when the stored one has ended (in_flight carries over). */
export function currentWindow(stored: WindowCounts | undefined, now: number): WindowCounts {
  if (!stored) return { windowStart: now, requests: 0, tokens: 0, inFlight: 0 };
  if (now >= stored.windowStart + WINDOW_MS) return { windowStart: now, requests: 0, tokens: 0, inFlight: stored.inFlight };
  return stored;
}

/**
 * Judges one admission of `tokens` projected tokens against every limit, given each scope's stored
 * counters (same order). The counters to write when every limit allows it, else the first refusal.
 */
export function judgeTraffic(
  limits: readonly TrafficLimit[],
  stored: readonly (WindowCounts | undefined)[],
  now: number,
  tokens: number,
): { next: WindowCounts[] } | { refusal: TrafficRefusal } {
  const next: WindowCounts[] = [];
  for (let i = 0; i < limits.length; i++) {
    const limit = limits[i]!;
    const w = currentWindow(stored[i], now);
    if (limit.requestsPerMinute !== null && w.requests + 1 > limit.requestsPerMinute) return { refusal: { index: i, kind: "rpm", window: w } };
    if (limit.tokensPerMinute !== null && w.tokens + tokens > limit.tokensPerMinute) return { refusal: { index: i, kind: "tpm", window: w } };
    if (limit.concurrentRequests !== null && w.inFlight + 1 > limit.concurrentRequests) return { refusal: { index: i, kind: "concurrency", window: w } };
    next.push({ windowStart: w.windowStart, requests: w.requests + 1, tokens: w.tokens + tokens, inFlight: w.inFlight + 1 });
  }
  return { next };
}

/** The hold's record of what was counted. */
export function trafficRecordOf(limits: readonly TrafficLimit[], next: readonly WindowCounts[], tokens: number): string {
  const record: TrafficRecord = { t: tokens, w: limits.map((l, i) => [l.scope, next[i]!.windowStart]) };
  return JSON.stringify(record);
}

/**
 * Milliseconds until a window resets, never more than one window: a request stamped `now` in one
 * process can be judged after another process's later request opened the window.
 */
function windowResetMs(windowStart: number, now: number): number {
  return Math.min(WINDOW_MS, Math.max(0, windowStart + WINDOW_MS - now));
}

/** The figures of the scope with the fewest requests left and of the one with the fewest tokens left, after this admission. */
export function trafficStatus(limits: readonly TrafficLimit[], next: readonly WindowCounts[], now: number): TrafficStatus {
  let requests: WindowFigures | null = null;
  let tokens: WindowFigures | null = null;
  limits.forEach((limit, i) => {
    const w = next[i]!;
    const resetMs = windowResetMs(w.windowStart, now);
    if (limit.requestsPerMinute !== null) {
      const figures = { limit: limit.requestsPerMinute, remaining: Math.max(0, limit.requestsPerMinute - w.requests), resetMs };
      if (tighter(figures, requests)) requests = figures;
    }
    if (limit.tokensPerMinute !== null) {
      const figures = { limit: limit.tokensPerMinute, remaining: Math.max(0, limit.tokensPerMinute - w.tokens), resetMs };
      if (tighter(figures, tokens)) tokens = figures;
    }
  });
  return { requests, tokens };
}

function tighter(candidate: WindowFigures, current: WindowFigures | null): boolean {
  if (current === null) return true;
  if (candidate.remaining !== current.remaining) return candidate.remaining < current.remaining;
  return candidate.limit < current.limit;
}

const SUBJECT_WORDS: Record<LimitSubject, string> = {
  key: "this API key",
  account: "this account",
  key_model: "this API key on this model",
  account_model: "this account on this model",
};

/**
 * The 429 for a refusal: code `<subject>_<kind>_exceeded`, Retry-After in whole seconds (at least 1),
 * and the refusing limit's x-ratelimit-* figures (Anthropic's names too on /v1/messages) as they stood:
 * a client reading only those headers learns as much as from an admitted request's.
 */
export function trafficRefusalError(limit: TrafficLimit, refusal: TrafficRefusal, now: number, anthropic: boolean): GatewayError {
  const retryAfter = refusal.kind === "concurrency" ? CONCURRENCY_RETRY_AFTER_SECONDS : Math.max(1, Math.ceil(windowResetMs(refusal.window.windowStart, now) / 1000));
  const what =
    refusal.kind === "rpm"
      ? `${limit.requestsPerMinute} requests per minute`
      : refusal.kind === "tpm"
        ? `${limit.tokensPerMinute} tokens per minute (prompt and maximum output, projected)`
        : `${limit.concurrentRequests} concurrent requests`;
  const when = refusal.kind === "concurrency" ? "when one of the requests in flight ends" : `in ${retryAfter} seconds`;
  return new GatewayError(
    "rate_limit_error",
    `This gateway's limit of ${what} for ${SUBJECT_WORDS[limit.subject]} is reached (the gateway's own limit, not the upstream provider's). Retry ${when}.`,
    {
      code: `${limit.subject}_${refusal.kind}_exceeded`,
      headers: { ...rateLimitHeaders(trafficStatus([limit], [refusal.window], now), now, anthropic), "retry-after": String(retryAfter) },
    },
  );
}
