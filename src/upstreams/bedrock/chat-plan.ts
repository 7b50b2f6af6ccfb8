// Chat Completions clients (and Messages and Responses clients, bridged over Chat) on Bedrock
// Runtime: Converse for a buffered answer, ConverseStream (an AWS event stream) for a stream.
import type { ModelConfig } from "../../core/catalog.js";
import type { SseEvent } from "../../core/sse.js";
import type { Usage } from "../../core/usage.js";
import type { ChatStreamItem } from "../chat-chunk-stream.js";
import {
  convertChatRequestToConverse,
  convertConverseResponseToChat,
  convertConverseUsageToChat,
  ConverseEventsToChatStream,
  type ConverseResponse,
  type ConverseStreamEvent,
  type ConverseUsage,
} from "./translators.js";
import type { ClientFrame, StreamTranslator, UpstreamPlan } from "../plan.js";
import { chatChunkFrame } from "../chat-stream.js";
import { parseEventJson, UpstreamProtocolError, usageFromChat } from "../usage-readers.js";

type Json = Record<string, unknown>;

export function usageFromConverse(usage: ConverseUsage | null | undefined): Usage | null {
  return usage && typeof usage === "object" ? usageFromChat(convertConverseUsageToChat(usage)) : null;
}

export function chatToBedrockConverse(body: Json, model: ModelConfig): UpstreamPlan {
  const stream = body.stream === true;
  const options = body.stream_options;
  const wantsUsage = !!options && typeof options === "object" && (options as Json).include_usage === true;
  const { request, warnings } = convertChatRequestToConverse(body, {
    defaultMaxTokens: model.defaultOutputTokens,
    maxOutputTokens: model.maxOutputTokens,
    upstreamModel: model.upstreamModel,
  });
  const modelPath = `/model/${encodeURIComponent(model.upstreamModel)}`;
  return {
    path: `${modelPath}/${stream ? "converse-stream" : "converse"}`,
    body: request,
    stream,
    warnings,
    outputLimit: request.inferenceConfig?.maxTokens,
    fromUpstream(json) {
      const response = json as ConverseResponse;
      const completion = convertConverseResponseToChat(response, { model: model.id });
      return { body: completion, usage: usageFromConverse(response.usage) };
    },
    streamTranslator(): StreamTranslator {
      const machine = new ConverseEventsToChatStream({ model: model.id });
      const delivered: string[] = [];
      const toFrames = (items: ChatStreamItem[]): ClientFrame[] => {
        const frames: ClientFrame[] = [];
        for (const item of items) {
          if ("error" in item) {
            frames.push({ data: item });
            continue;
          }
          if (item.usage && item.choices.length === 0 && !wantsUsage) continue;
          for (const choice of item.choices) {
            if (typeof choice.delta.content === "string") delivered.push(choice.delta.content);
            for (const call of choice.delta.tool_calls ?? []) delivered.push(call.function?.name ?? "", call.function?.arguments ?? "");
          }
          frames.push(chatChunkFrame(item));
        }
        return frames;
      };
      return {
        push: (event: SseEvent) => toFrames(machine.push(converseEvent(event))),
        end: () => [...toFrames(machine.finish()), { data: "[DONE]", raw: true }],
        fail: (type, message) => toFrames(machine.abort(message, type)),
        reportedUsage: () => usageFromConverse(machine.reportedUsage()),
        deliveredText: () => delivered.join(""),
      };
    },
  };
}

/** A decoded event stream message as the Converse event it names; its payload must be a JSON object. */
function converseEvent(event: SseEvent): ConverseStreamEvent {
  const payload = parseEventJson(event.data);
  if (payload === null || typeof payload !== "object" || Array.isArray(payload)) throw new UpstreamProtocolError("the upstream sent an event whose payload is not an object");
  return { type: event.event ?? "", payload } as ConverseStreamEvent;
}
