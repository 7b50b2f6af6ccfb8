// Stage: the response cache (ADR 0044), between planning and admission on the model routes. A
// request whose key or workspace uses the cache is looked up by its normalised form (cache-key.ts):
// - a hit is served here, never forwarded, and metered like any answer: admitted (the hold the
//   request would take; a free hit is not admitted, it cannot cost anything), then settled at the hit
//   price as a ledger row of provider "(cache)" with no tokens (docs/billing.md, "Response cache");
//   the settlement comes before anything is sent, so a failed one is a 502 and charges nothing;
// - a miss goes on to the metered call, and its answer is stored once it is settled and complete.
import type { FastifyReply, FastifyRequest } from "fastify";
import { newId } from "../../core/ids.js";
import { formatUsd, type Nano } from "../../core/money.js";
import { ZERO_USAGE } from "../../core/usage.js";
import type { Hold } from "../../billing/types.js";
import type { ClientFrame } from "../../upstreams/plan.js";
import { admitWithoutForwarding, type MeteredRequest } from "../metered-call.js";
import type { PipelineServices } from "../services.js";
import { setRateLimitHeaders } from "../traffic.js";
import { selectedAnswerGuardrails } from "../guardrails/stage.js";
import { withCost } from "../in-band-cost.js";
import { scrubJsonText, scrubValue } from "../relay.js";
import type { Scrubber } from "../scrub.js";
import { cacheKey, type CacheKeyParts } from "./cache-key.js";
import { hitCost, type CacheEntry } from "./response-cache.js";

/** The ledger's and the request log's provider for an answer the cache served (not a configurable name). */
export const CACHE_PROVIDER = "(cache)";

export const CACHE_HEADER = "x-gateway-cache";

/** A request that uses the cache: where its answer is (or goes), for how long, and what was found. */
export interface CacheLookup {
  key: string;
  ttlSeconds: number;
  entry: CacheEntry | null;
}

/** Null when the request does not use the cache (no setting for its key or workspace). */
export async function lookUpAnswer(services: PipelineServices, request: FastifyRequest, reply: FastifyReply, parts: Omit<CacheKeyParts, "accountId">): Promise<CacheLookup | null> {
  const cache = services.responseCache;
  if (cache === null) return null;
  const { principal } = request;
  const policy = await cache.policyFor({ keyId: principal.key.id, workspaceId: principal.key.workspaceId }, services.config.cache);
  if (policy === null) return null;
  const key = cacheKey(services.config.cache.keyPrefix, {
    ...parts,
    accountId: policy.scope === "gateway" ? null : principal.account.id,
    selectedGuardrails: selectedAnswerGuardrails(services, request),
  });
  const entry = await cache.lookup(key);
  reply.header(CACHE_HEADER, entry === null ? "miss" : "hit");
  return { key, ttlSeconds: policy.ttlSeconds, entry };
}

/** Stores a miss's answer in the background (a failure is counted, never seen by the request). */
export function storeAnswer(services: PipelineServices, lookup: CacheLookup | null, entry: CacheEntry): void {
  if (lookup === null || services.responseCache === null) return;
  void services.responseCache.put(lookup.key, entry, lookup.ttlSeconds, services.config.cache.maxEntryBytes);
}

/**
 * Charges a hit: admission (not for a free hit), then settlement of the hit price with zero usage.
 * Throws the admission's refusal, or ledger_write_failed (the hold released). Returns the cost.
 */
export async function chargeHit(services: PipelineServices, request: FastifyRequest, reply: FastifyReply, metered: MeteredRequest, entry: CacheEntry): Promise<Nano> {
  const cost = hitCost(BigInt(entry.costNano), services.config.cache.hitPriceBasisPoints);
  const { admission } = metered;
  let hold: Hold;
  if (cost > 0n) {
    hold = await admitWithoutForwarding(services, metered);
    setRateLimitHeaders(reply, hold, admission.route);
  } else {
    hold = {
      id: newId("hold"),
      requestId: admission.requestId,
      accountId: admission.accountId,
      keyId: admission.keyId,
      amount: 0n,
      tokens: 0,
      model: admission.model,
      route: admission.route,
    };
  }
  try {
    await services.billing.settle({ ...hold, attempts: 0 }, ZERO_USAGE, CACHE_PROVIDER, cost);
  } catch (error) {
    if (cost > 0n) await services.billing.release(hold).catch(() => undefined);
    throw error;
  }
  request.meter.provider = CACHE_PROVIDER;
  request.meter.attempts = 0;
  request.meter.usage = ZERO_USAGE;
  request.meter.inputTokens = 0;
  request.meter.outputTokens = 0;
  request.meter.costNano = cost;
  reply.header("x-gateway-attempts", "0");
  return cost;
}

/** A buffered hit's body with its charged cost in usage.cost, as a forwarded answer carries it. */
export function bufferedHitBody(entry: Extract<CacheEntry, { kind: "buffered" }>, cost: Nano): string {
  return JSON.stringify(withCost(entry.body, "usage", formatUsd(cost)));
}

/** A stream hit's frames, the charged cost stamped into the last usage frame (as CostInBandStream does). */
export function streamHitFrames(entry: Extract<CacheEntry, { kind: "stream" }>, cost: Nano): ClientFrame[] {
  const frames = entry.frames.map((frame) => ({ ...frame }));
  for (let i = frames.length - 1; i >= 0; i--) {
    const frame = frames[i]!;
    if (frame.usageAt === undefined) continue;
    if (!frame.raw && !frame.jsonText) frames[i] = { ...frame, data: withCost(frame.data, frame.usageAt, formatUsd(cost)) };
    break;
  }
  return frames;
}

/** Frames as stored: scrubbed now with the call's scrubber (it knows the account's own keys), JSON text kept as text. */
export function storableFrames(frames: readonly ClientFrame[], scrubber: Scrubber): ClientFrame[] {
  return frames.map((frame) => {
    if (frame.raw) return frame;
    if (frame.jsonText) return { ...frame, data: scrubJsonText(scrubber, String(frame.data)) };
    return { ...frame, data: scrubValue(scrubber, frame.data) };
  });
}
