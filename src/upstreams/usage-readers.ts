// Upstream usage objects -> the gateway's Usage.
import type { Usage } from "../core/usage.js";
import { readChatUsage, type ChatUsage } from "../wire/chat/index.js";

export function usageFromChat(usage: ChatUsage | null | undefined): Usage | null {
  if (!usage || typeof usage !== "object") return null;
  const counts = readChatUsage(usage);
  const write1h = Math.min(counts.cacheWrite1hTokens, counts.cacheWriteTokens);
  return {
    inputTokens: counts.promptTokens,
    cachedInputTokens: Math.min(counts.cachedTokens, counts.promptTokens),
    // prompt_tokens_details.cache_write_tokens: written for 5 minutes unless the extras say 1 hour.
    cacheWrite5mTokens: counts.cacheWriteTokens - write1h,
    cacheWrite1hTokens: write1h,
    outputTokens: counts.completionTokens,
    reasoningTokens: Math.min(counts.reasoningTokens, counts.completionTokens),
    webSearchCalls: counts.webSearchCalls,
    estimated: false,
  };
}

/**
 * Anthropic's cache writes by lifetime: `total` is everything written (part of the input), `oneHour`
 * the part reported as written for 1 hour; the rest is a 5-minute write (what a provider reporting
 * only the total wrote). A split reported without the total makes the total. Numbers pass as they
 * are, so that a negative or infinite count stays one and plausibleUsage() refuses the report.
 */
export function splitCacheWrites(total: unknown, fiveMinutes: unknown, oneHour: unknown): { write5m: number; write1h: number } {
  const reported = (value: unknown): number => (typeof value === "number" ? value : 0);
  const all = typeof total === "number" ? total : reported(fiveMinutes) + reported(oneHour);
  const oneHourPart = reported(oneHour);
  const write1h = oneHourPart > all ? all : oneHourPart;
  return { write5m: all - write1h, write1h };
}

/** Parses an upstream event's JSON; a broken event is an upstream protocol error. */
export function parseEventJson(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw new UpstreamProtocolError("the upstream sent an event that is not JSON");
  }
}

export class UpstreamProtocolError extends Error {
  override name = "UpstreamProtocolError";
}
