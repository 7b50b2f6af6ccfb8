// Converse usage and stop reasons as Chat's. Converse's inputTokens excludes the prompt-cache reads
// and writes (as Anthropic's input_tokens does), so Chat's prompt_tokens is their sum. Reasoning is
// counted in outputTokens with no figure of its own: reasoning_tokens is estimated from its text, as
// for Anthropic models (the gateway's estimator, capped at outputTokens).
import { estimateTextTokens } from "../../billing/estimate-tokens.js";
import { USAGE_EXTRAS, type ChatFinishReason, type ChatUsage } from "../../wire/chat/types.js";
import { isNumber } from "../../wire/shared/narrow.js";
import type { ConverseUsage } from "./types.js";

export function convertConverseUsageToChat(usage: ConverseUsage | null | undefined, reasoningText = ""): ChatUsage {
  const count = (value: unknown): number => (isNumber(value) ? value : 0);
  const cacheRead = count(usage?.cacheReadInputTokens);
  const cacheWrite = count(usage?.cacheWriteInputTokens);
  const prompt = count(usage?.inputTokens) + cacheRead + cacheWrite;
  const output = count(usage?.outputTokens);
  const result: ChatUsage = {
    prompt_tokens: prompt,
    completion_tokens: output,
    total_tokens: prompt + output,
    prompt_tokens_details: cacheWrite > 0 ? { cached_tokens: cacheRead, cache_write_tokens: cacheWrite } : { cached_tokens: cacheRead },
  };
  if (reasoningText !== "") result.completion_tokens_details = { reasoning_tokens: Math.min(output, estimateTextTokens(reasoningText)) };
  // The 1-hour part of the writes has no Chat field: carried for billing only (the rest are 5-minute writes).
  let write1h = 0;
  for (const detail of Array.isArray(usage?.cacheDetails) ? usage.cacheDetails : []) if (detail?.ttl === "1h") write1h += count(detail.inputTokens);
  if (write1h > 0) result[USAGE_EXTRAS] = { cacheWrite1hTokens: Math.min(write1h, cacheWrite) };
  return result;
}

export function mapConverseStopReason(stopReason: string | null | undefined): ChatFinishReason {
  switch (stopReason) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "content_filtered":
    case "guardrail_intervened":
      return "content_filter";
    default:
      // end_turn, stop_sequence and reasons added after this was written.
      return "stop";
  }
}
