// Usage between Chat and Anthropic. Chat's prompt_tokens includes cached tokens; Anthropic's input_tokens
// excludes cache reads and writes, so the split must keep the total the same in both directions.
import { estimateTextTokens } from "../../billing/estimate-tokens.js";
import { readChatUsage } from "../chat/read-chat-usage.js";
import { USAGE_EXTRAS, type ChatUsage } from "../chat/types.js";
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
  cache_creation?: { ephemeral_5m_input_tokens?: number | null; ephemeral_1h_input_tokens?: number | null } | null;
  server_tool_use?: { web_search_requests?: number | null } | null;
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
  // The 1-hour part of the cache writes and the web searches have no Chat field: carried for billing only.
  const write1h = usage?.cache_creation?.ephemeral_1h_input_tokens;
  const searches = usage?.server_tool_use?.web_search_requests;
  if ((isNumber(write1h) && write1h > 0) || (isNumber(searches) && searches > 0)) {
    result[USAGE_EXTRAS] = { cacheWrite1hTokens: isNumber(write1h) ? Math.min(write1h, cacheWrite) : 0, webSearchCalls: isNumber(searches) ? searches : 0 };
  }
  return result;
}
