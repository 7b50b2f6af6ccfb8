// What the limits of a key allow and how much of each window is used, for GET /v1/me, the dashboard
// and the CLI: a plain read of traffic_windows (a window that has ended shows as empty).
import type { Kysely } from "kysely";
import type { Database } from "../store/tables.js";
import { currentWindow, limitsOverview, WINDOW_MS, type LimitSubjects, type TierLimits } from "../core/traffic-limits.js";

export interface TrafficUseView {
  /** "key" or "account": whose limit; `model`: the model it is limited to, null for every model. */
  subject: "key" | "account";
  model: string | null;
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
  concurrent_requests: number | null;
  /** The current window's use; resets_at null when no window is open. */
  requests: number;
  tokens: number;
  in_flight: number;
  resets_at: string | null;
}

export async function trafficUse(db: Kysely<Database>, tier: TierLimits, subjects: LimitSubjects, now: number): Promise<TrafficUseView[]> {
  const overview = limitsOverview(tier, subjects);
  if (overview.length === 0) return [];
  const rows = await db
    .selectFrom("traffic_windows")
    .selectAll()
    .where(
      "scope",
      "in",
      overview.map((o) => o.limit.scope),
    )
    .execute();
  const byScope = new Map(rows.map((r) => [r.scope, r]));
  return overview.map(({ model, limit }) => {
    const row = byScope.get(limit.scope);
    const stored = row && { windowStart: Number(row.window_start), requests: Number(row.requests), tokens: Number(row.tokens), inFlight: Number(row.in_flight) };
    const w = currentWindow(stored, now);
    const open = stored !== undefined && w.windowStart === stored.windowStart;
    return {
      subject: limit.subject === "key" || limit.subject === "key_model" ? "key" : "account",
      model,
      requests_per_minute: limit.requestsPerMinute,
      tokens_per_minute: limit.tokensPerMinute,
      concurrent_requests: limit.concurrentRequests,
      requests: w.requests,
      tokens: w.tokens,
      in_flight: w.inFlight,
      resets_at: open ? new Date(w.windowStart + WINDOW_MS).toISOString() : null,
    };
  });
}
