// Normalizes Chat usage: every *_details object and member is optional on the wire, so default to 0 once here.
import { isNumber } from "../shared/narrow.js";
import type { ChatUsage } from "./types.js";

export interface ChatUsageCounts {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
}

export function readChatUsage(usage: ChatUsage | null | undefined): ChatUsageCounts {
  const promptTokens = isNumber(usage?.prompt_tokens) ? usage.prompt_tokens : 0;
  const completionTokens = isNumber(usage?.completion_tokens) ? usage.completion_tokens : 0;
  const cached = usage?.prompt_tokens_details?.cached_tokens;
  const cacheWrite = usage?.prompt_tokens_details?.cache_write_tokens;
  const reasoning = usage?.completion_tokens_details?.reasoning_tokens;
  return {
    promptTokens,
    completionTokens,
    totalTokens: isNumber(usage?.total_tokens) ? usage.total_tokens : promptTokens + completionTokens,
    cachedTokens: isNumber(cached) ? cached : 0,
    cacheWriteTokens: isNumber(cacheWrite) ? cacheWrite : 0,
    reasoningTokens: isNumber(reasoning) ? reasoning : 0,
  };
}
