// Chat Completions clients on Google Gemini upstreams: translated both ways. The model and the
// stream choice are in the path (generateContent, or streamGenerateContent with alt=sse).
import type { ModelConfig } from "../../core/catalog.js";
import { convertChatRequestToGemini, convertGeminiResponseToChat, GeminiChunksToChatStream, type GeminiErrorBody, type GeminiResponse } from "./translators.js";
import type { UpstreamPlan } from "../plan.js";
import { chatChunkTranslator, clientAskedForUsage } from "../chat-stream.js";
import { parseEventJson, usageFromChat } from "../usage-readers.js";

type Json = Record<string, unknown>;

/** The generateContent path of a model; its name is one path segment. */
export function geminiPath(upstreamModel: string, stream: boolean): string {
  const model = encodeURIComponent(upstreamModel.replace(/^models\//, ""));
  return stream ? `/v1beta/models/${model}:streamGenerateContent?alt=sse` : `/v1beta/models/${model}:generateContent`;
}

export function chatToGemini(body: Json, model: ModelConfig): UpstreamPlan {
  const stream = body.stream === true;
  const wantsUsage = clientAskedForUsage(body);
  const { request, warnings } = convertChatRequestToGemini(body);
  return {
    path: geminiPath(model.upstreamModel, stream),
    body: request,
    stream,
    warnings,
    fromUpstream(json) {
      const completion = convertGeminiResponseToChat(json as GeminiResponse, { model: model.id });
      return { body: completion, usage: usageFromChat(completion.usage) };
    },
    streamTranslator() {
      const decoder = new GeminiChunksToChatStream({ model: model.id });
      return chatChunkTranslator(decoder, {
        wantsUsage,
        read: (event) => parseEventJson(event.data) as GeminiResponse | GeminiErrorBody,
        reportedUsage: () => usageFromChat(decoder.reportedUsage()),
      });
    },
  };
}
