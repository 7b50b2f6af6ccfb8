// Chat Completions clients (and Messages and Responses clients, bridged over Chat) on Bedrock
// Runtime: Converse for a buffered answer, ConverseStream (an AWS event stream) for a stream.
import type { ModelConfig } from "../../core/catalog.js";
import type { SseEvent } from "../../core/sse.js";
import type { Usage } from "../../core/usage.js";
import {
  convertChatRequestToConverse,
  convertConverseResponseToChat,
  convertConverseUsageToChat,
  ConverseEventsToChatStream,
  type ConverseResponse,
  type ConverseStreamEvent,
  type ConverseUsage,
} from "./translators.js";
import type { UpstreamPlan } from "../plan.js";
import { chatChunkTranslator, clientAskedForUsage } from "../chat-stream.js";
import { parseEventJson, UpstreamProtocolError, usageFromChat } from "../usage-readers.js";

type Json = Record<string, unknown>;

export function usageFromConverse(usage: ConverseUsage | null | undefined): Usage | null {
  return usage && typeof usage === "object" ? usageFromChat(convertConverseUsageToChat(usage)) : null;
}

export function chatToBedrockConverse(body: Json, model: ModelConfig): UpstreamPlan {
  const stream = body.stream === true;
  const wantsUsage = clientAskedForUsage(body);
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
    streamTranslator() {
      const decoder = new ConverseEventsToChatStream({ model: model.id });
      return chatChunkTranslator(decoder, { wantsUsage, read: converseEvent, reportedUsage: () => usageFromConverse(decoder.reportedUsage()) });
    },
  };
}

/** A decoded event stream message as the Converse event it names; its payload must be a JSON object. */
function converseEvent(event: SseEvent): ConverseStreamEvent {
  const payload = parseEventJson(event.data);
  if (payload === null || typeof payload !== "object" || Array.isArray(payload)) throw new UpstreamProtocolError("the upstream sent an event whose payload is not an object");
  return { type: event.event ?? "", payload } as ConverseStreamEvent;
}
