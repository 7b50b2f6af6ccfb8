// Chat Completions clients on Google Gemini upstreams: translated both ways. The model and the
// stream choice are in the path (generateContent, or streamGenerateContent with alt=sse).
import type { ModelConfig } from "../../core/catalog.js";
import { convertChatRequestToGemini, convertGeminiResponseToChat, GeminiChunksToChatStream, type GeminiErrorBody, type GeminiResponse } from "./translators.js";
import type { ClientFrame, StreamTranslator, UpstreamPlan } from "../plan.js";
import { chatChunkFrame, clientAskedForUsage, DeliveredText } from "../chat-stream.js";
import type { ChatStreamItem } from "../chat-chunk-stream.js";
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
    streamTranslator(): StreamTranslator {
      const machine = new GeminiChunksToChatStream({ model: model.id });
      const delivered = new DeliveredText();
      const toFrames = (items: ChatStreamItem[]): ClientFrame[] => {
        const frames: ClientFrame[] = [];
        for (const item of items) {
          if ("error" in item) {
            frames.push({ data: item });
            continue;
          }
          // The usage chunk of finish(): the client sees it only if it asked for it.
          if (item.usage && item.choices.length === 0 && !wantsUsage) continue;
          delivered.addChunk(item);
          frames.push(chatChunkFrame(item));
        }
        return frames;
      };
      return {
        push: (event) => toFrames(machine.push(parseEventJson(event.data) as GeminiResponse | GeminiErrorBody)),
        end: () => [...toFrames(machine.finish()), { data: "[DONE]", raw: true }],
        fail: (type, message) => toFrames(machine.abort(message, type)),
        reportedUsage: () => usageFromChat(machine.reportedUsage()),
        deliveredText: () => delivered.text(),
      };
    },
  };
}
