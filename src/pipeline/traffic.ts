// The request path's side of the rate and concurrency limits (src/core/traffic-limits.ts): which
// limits apply to the authenticated key for the model asked for (the tier's defaults from the config,
// the key's and the account's own values as loaded with the key by the auth cache: a changed limit
// takes effect when the cache drops the key, at once in the process that changed it and within a
// second elsewhere through auth_events), and the x-ratelimit-* headers of an admitted request.
import type { FastifyReply } from "fastify";
import { rateLimitHeaders } from "../core/rate-limit-headers.js";
import { applicableLimits, limitSubjectsOf, NO_TIER_LIMITS, type TierLimits, type TrafficLimit } from "../core/traffic-limits.js";
import type { Hold, Route } from "../billing/types.js";
import type { GatewayConfig } from "../config/load.js";
import type { Principal } from "./auth-cache.js";

interface KnownLimits {
  tier: TierLimits;
  byModel: Map<string, readonly TrafficLimit[]>;
}
/**
 * The lists already built, per principal as the auth cache holds it and per model: a changed limit
 * comes with a new principal (the cache drops the old one), a reloaded config with new tier limits.
 * One list per key and model also lets limitsField (admission-postgres.ts) build its field once.
 */
const knownLimits = new WeakMap<Principal, KnownLimits>();

/** The limits for a request by `principal` for `modelId` (the id the client named); empty when none is configured. */
export function trafficLimitsFor(config: Pick<GatewayConfig, "tierLimits">, principal: Principal, modelId: string): readonly TrafficLimit[] {
  const tier = config.tierLimits.get(principal.account.tier) ?? NO_TIER_LIMITS;
  let known = knownLimits.get(principal);
  if (known === undefined || known.tier !== tier) knownLimits.set(principal, (known = { tier, byModel: new Map() }));
  let limits = known.byModel.get(modelId);
  if (limits === undefined) known.byModel.set(modelId, (limits = applicableLimits(tier, limitSubjectsOf(principal), modelId)));
  return limits;
}

/**
 * Puts the tightest limits' figures on the response (a stream's head included: it is written from
 * the reply's headers). Nothing without an applicable limit. On /v1/messages also Anthropic's names.
 */
export function setRateLimitHeaders(reply: FastifyReply, hold: Hold, route: Route, now = Date.now()): void {
  if (!hold.traffic) return;
  reply.headers(rateLimitHeaders(hold.traffic, now, route === "messages"));
}
