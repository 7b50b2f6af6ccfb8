// Usage between Chat and Anthropic. Chat's prompt_tokens includes cached tokens; Anthropic's input_tokens
// excludes cache reads and writes, so the split must keep the total the same in both directions.
import { estimateTextTokens } from "../../billing/estimate-tokens.js";
import { readChatUsage } from "../openai-chat/read-chat-usage.js";
import type { ChatUsage } from "../openai-chat/types.js";
import { isNumber } from "../shared/narrow.js";

export interface AnthropicUsageCounts {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export function convertChatUsageToAnthropic(usage: ChatUsage | null | undefined): AnthropicUsageCounts {
  const counts = readChatUsage(usage);
  return {
    input_tokens: Math.max(0, counts.promptTokens - counts.cachedTokens - counts.cacheWriteTokens),
    output_tokens: counts.completionTokens,
    cache_creation_input_tokens: counts.cacheWriteTokens,
    cache_read_input_tokens: counts.cachedTokens,
  };
}

export interface AnthropicUsageLike {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number } | null;
}

/**
 * Anthropic usage as Chat usage. Anthropic counts thinking in output_tokens without a separate figure,
 * so unless it reports one, reasoning_tokens is estimated from the thinking text delivered (the
 * gateway's estimator, capped at output_tokens): a lower bound where the model summarises its thinking.
 */
export function convertAnthropicUsageToChat(usage: AnthropicUsageLike | null | undefined, thinkingText = ""): ChatUsage {
  const input = isNumber(usage?.input_tokens) ? usage.input_tokens : 0;
  const cacheRead = isNumber(usage?.cache_read_input_tokens) ? usage.cache_read_input_tokens : 0;
  const cacheWrite = isNumber(usage?.cache_creation_input_tokens) ? usage.cache_creation_input_tokens : 0;
  const output = isNumber(usage?.output_tokens) ? usage.output_tokens : 0;
  const thinking = usage?.output_tokens_details?.thinking_tokens;
  const prompt = input + cacheRead + cacheWrite;
  const result: ChatUsage = {
    prompt_tokens: prompt,
    completion_tokens: output,
    total_tokens: prompt + output,
    prompt_tokens_details: cacheWrite > 0 ? { cached_tokens: cacheRead, cache_write_tokens: cacheWrite } : { cached_tokens: cacheRead },
  };
  if (isNumber(thinking)) result.completion_tokens_details = { reasoning_tokens: thinking };
  else if (thinkingText !== "") result.completion_tokens_details = { reasoning_tokens: Math.min(output, estimateTextTokens(thinkingText)) };
  return result;
}
