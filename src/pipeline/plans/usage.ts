// Upstream usage objects -> the gateway's Usage.
import type { Usage } from "../../core/usage.js";
import { readChatUsage, type ChatUsage } from "../../formats/openai-chat/index.js";

export function usageFromChat(usage: ChatUsage | null | undefined): Usage | null {
  if (!usage || typeof usage !== "object") return null;
  const counts = readChatUsage(usage);
  return {
    inputTokens: counts.promptTokens,
    cachedInputTokens: Math.min(counts.cachedTokens, counts.promptTokens),
    outputTokens: counts.completionTokens,
    reasoningTokens: Math.min(counts.reasoningTokens, counts.completionTokens),
    estimated: false,
  };
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
