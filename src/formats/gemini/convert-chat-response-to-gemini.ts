// Chat Completions response -> Gemini GenerateContentResponse, and the pieces the stream translator
// shares: the finish reason and usageMetadata. Reasoning becomes a `thought: true` part only when the
// client asked for thoughts (thinkingConfig.includeThoughts), as Gemini does.
import type { ChatCompletion, ChatFinishReason, ChatUsage } from "../../wire/chat/types.js";
import type { GeminiFinishReason, GeminiPart, GeminiResponse, GeminiUsageMetadata } from "../../wire/gemini/types.js";
import { isString, parseJsonObject } from "../../wire/shared/narrow.js";

export interface ChatToGeminiOptions {
  /** The gateway model id, reported as modelVersion. */
  model: string;
  /** Thought parts in the answer (the client's thinkingConfig.includeThoughts). */
  includeThoughts: boolean;
}

/** stop and tool_calls -> STOP, length -> MAX_TOKENS, content_filter -> SAFETY. */
export function mapChatFinishReason(reason: ChatFinishReason | null | undefined): GeminiFinishReason {
  if (reason === "length") return "MAX_TOKENS";
  if (reason === "content_filter") return "SAFETY";
  return "STOP";
}

/**
 * Chat usage -> usageMetadata: promptTokenCount is the whole prompt (cached tokens included, as
 * Gemini counts it), candidatesTokenCount the answer without the reasoning, thoughtsTokenCount the
 * reasoning (the two together are what is billed as output).
 */
export function convertChatUsageToGemini(usage: ChatUsage | null | undefined): GeminiUsageMetadata {
  const prompt = usage?.prompt_tokens ?? 0;
  const completion = usage?.completion_tokens ?? 0;
  const thoughts = Math.min(usage?.completion_tokens_details?.reasoning_tokens ?? 0, completion);
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const metadata: GeminiUsageMetadata = { promptTokenCount: prompt, candidatesTokenCount: completion - thoughts, totalTokenCount: prompt + completion };
  if (cached > 0) metadata.cachedContentTokenCount = cached;
  if (thoughts > 0) metadata.thoughtsTokenCount = thoughts;
  return metadata;
}

/** A function call part; the Chat call id travels as the call's id, which Gemini clients echo in their functionResponse. */
export function functionCallPart(id: string | undefined, name: string, argumentsText: string): GeminiPart {
  const args = parseJsonObject(argumentsText).value;
  return { functionCall: { name, args, ...(id !== undefined && id !== "" && { id }) } };
}

export function convertChatResponseToGemini(completion: ChatCompletion, options: ChatToGeminiOptions): GeminiResponse {
  const choice = completion.choices[0];
  const message = choice?.message;
  const parts: GeminiPart[] = [];
  if (options.includeThoughts && isString(message?.reasoning_content) && message.reasoning_content !== "") parts.push({ text: message.reasoning_content, thought: true });
  if (isString(message?.content) && message.content !== "") parts.push({ text: message.content });
  if (isString(message?.refusal) && message.refusal !== "") parts.push({ text: message.refusal });
  for (const call of message?.tool_calls ?? []) parts.push(functionCallPart(call.id, call.function.name, call.function.arguments));
  return {
    candidates: [{ content: { role: "model", parts }, finishReason: mapChatFinishReason(choice?.finish_reason), index: 0 }],
    usageMetadata: convertChatUsageToGemini(completion.usage),
    modelVersion: options.model,
    responseId: completion.id,
  };
}
