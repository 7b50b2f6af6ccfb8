// Gemini usageMetadata -> Chat usage. promptTokenCount already includes the cached content;
// candidatesTokenCount leaves the thoughts out, which are billed as output, so they are added to the
// completion and reported as its reasoning part. Prompt tokens of built-in tools are billed as input.
import type { ChatUsage } from "../../wire/chat/types.js";
import { isNumber } from "../../wire/shared/narrow.js";
import type { GeminiUsageMetadata } from "../../wire/gemini/types.js";

const countOf = (value: unknown): number => (isNumber(value) ? value : 0);

export function convertGeminiUsageToChat(usage: GeminiUsageMetadata | null | undefined): ChatUsage {
  const promptTokens = countOf(usage?.promptTokenCount) + countOf(usage?.toolUsePromptTokenCount);
  const thoughts = countOf(usage?.thoughtsTokenCount);
  const completionTokens = countOf(usage?.candidatesTokenCount) + thoughts;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: Math.min(countOf(usage?.cachedContentTokenCount), promptTokens) },
    completion_tokens_details: { reasoning_tokens: thoughts },
  };
}
