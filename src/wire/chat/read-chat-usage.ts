// Normalizes Chat usage: every *_details object and member is optional on the wire, so default to 0 once here.
import { isNumber } from "../shared/narrow.js";
import { USAGE_EXTRAS, type ChatUsage } from "./types.js";

export interface ChatUsageCounts {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cachedTokens: number;
  /** All cache writes; cacheWrite1hTokens is the part written for 1 hour. */
  cacheWriteTokens: number;
  cacheWrite1hTokens: number;
  reasoningTokens: number;
  webSearchCalls: number;
}

export function readChatUsage(usage: ChatUsage | null | undefined): ChatUsageCounts {
  const promptTokens = isNumber(usage?.prompt_tokens) ? usage.prompt_tokens : 0;
  const completionTokens = isNumber(usage?.completion_tokens) ? usage.completion_tokens : 0;
  const cached = usage?.prompt_tokens_details?.cached_tokens;
  const cacheWrite = usage?.prompt_tokens_details?.cache_write_tokens;
  const reasoning = usage?.completion_tokens_details?.reasoning_tokens;
  const extras = usage?.[USAGE_EXTRAS];
  return {
    promptTokens,
    completionTokens,
    totalTokens: isNumber(usage?.total_tokens) ? usage.total_tokens : promptTokens + completionTokens,
    cachedTokens: isNumber(cached) ? cached : 0,
    cacheWriteTokens: isNumber(cacheWrite) ? cacheWrite : 0,
    reasoningTokens: isNumber(reasoning) ? reasoning : 0,
    cacheWrite1hTokens: isNumber(extras?.cacheWrite1hTokens) ? extras.cacheWrite1hTokens : 0,
    webSearchCalls: isNumber(extras?.webSearchCalls) ? extras.webSearchCalls : 0,
  };
}
