// Gemini API clients bridged over the upstream's Chat plan.
import { estimateTextTokens } from "../../billing/estimate-tokens.js";
import type { ModelConfig } from "../../core/catalog.js";
import type { ClientFrame, UpstreamPlan } from "../../upstreams/plan.js";
import { bridgeOverChat, type ChatBridge } from "../bridge-over-chat.js";
import { ChatStreamToGeminiChunks, type GeminiStreamItem } from "./chat-stream-to-gemini-chunks.js";
import { convertChatResponseToGemini } from "./convert-chat-response-to-gemini.js";
import { convertGeminiRequestToChat } from "./convert-gemini-request-to-chat.js";

type Json = Record<string, unknown>;

/** The gateway's estimate of a Gemini prompt: system instruction, contents and tools, as text. */
export function estimateGeminiPromptTokens(body: Json): number {
  return estimateTextTokens(JSON.stringify([body.systemInstruction ?? "", body.contents ?? [], body.tools ?? []]));
}

export interface GeminiOverChatOptions {
  stream: boolean;
  /** The upstream's Chat plan carries reasoning_effort. */
  reasoningEffort: boolean;
}

/** A Gemini request over the upstream's Chat plan (the translated request is a Chat request). */
export function geminiOverChat(body: Json, model: ModelConfig, chatPlan: (body: Json, model: ModelConfig) => UpstreamPlan, options: GeminiOverChatOptions): UpstreamPlan {
  const { request, warnings, includeThoughts } = convertGeminiRequestToChat(body, {
    model: model.id,
    stream: options.stream,
    reasoningEffort: options.reasoningEffort,
    imageInput: model.modalities.input.includes("image"),
  });
  const bridge: ChatBridge = {
    fromChatCompletion: (completion) => convertChatResponseToGemini(completion, { model: model.id, includeThoughts }),
    stream() {
      const machine = new ChatStreamToGeminiChunks({ model: model.id, includeThoughts });
      const frames = (items: GeminiStreamItem[]): ClientFrame[] => items.map((data) => ({ data }));
      return {
        push: (chunk) => frames(machine.push(chunk)),
        finish: () => frames(machine.finish()),
        abort: (type, message) => frames(machine.abort(message, type)),
      };
    },
  };
  return bridgeOverChat(chatPlan(request, model), bridge, warnings);
}
