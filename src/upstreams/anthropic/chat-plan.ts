// Chat Completions clients to Anthropic-native upstreams: translated both ways.
import type { ModelConfig } from "../../core/catalog.js";
import type { AnthropicMessage, AnthropicStreamEvent } from "../../wire/messages/types.js";
import { chatChunkFrame, clientAskedForUsage, DeliveredText } from "../chat-stream.js";
import type { ClientFrame, StreamTranslator, UpstreamPlan } from "../plan.js";
import { parseEventJson, usageFromChat } from "../usage-readers.js";
import { convertChatRequestToMessages } from "./convert-chat-request-to-messages.js";
import { convertMessagesResponseToChat } from "./convert-messages-response-to-chat.js";
import { MessagesEventsToChatStream } from "./messages-events-to-chat-stream.js";

type Json = Record<string, unknown>;

export function chatToAnthropic(body: Json, model: ModelConfig): UpstreamPlan {
  const stream = body.stream === true;
  const wantsUsage = clientAskedForUsage(body);
  const { request, warnings } = convertChatRequestToMessages(body, {
    defaultMaxTokens: model.defaultOutputTokens,
    maxOutputTokens: model.maxOutputTokens,
    cacheBreakpoints: (model.promptCaching ?? "auto") === "auto" ? "auto" : "off",
  });
  return {
    path: "/v1/messages",
    body: { ...request, model: model.upstreamModel, stream },
    stream,
    warnings,
    outputLimit: request.max_tokens,
    fromUpstream(json) {
      const completion = convertMessagesResponseToChat(json as AnthropicMessage, { model: model.id });
      return { body: completion, usage: usageFromChat(completion.usage) };
    },
    streamTranslator(): StreamTranslator {
      const machine = new MessagesEventsToChatStream({ model: model.id });
      const delivered = new DeliveredText();
      let usage: ReturnType<typeof usageFromChat> = null;
      const toFrames = (items: ReturnType<MessagesEventsToChatStream["push"]>): ClientFrame[] => {
        const frames: ClientFrame[] = [];
        for (const item of items) {
          if ("error" in item) {
            frames.push({ data: item });
            continue;
          }
          if (item.usage && item.choices.length === 0) {
            usage = usageFromChat(item.usage);
            if (!wantsUsage) continue;
          }
          delivered.addChunk(item);
          frames.push(chatChunkFrame(item));
        }
        return frames;
      };
      return {
        push: (event) => toFrames(machine.push(parseEventJson(event.data) as AnthropicStreamEvent)),
        end: () => [...toFrames(machine.finish()), { data: "[DONE]", raw: true }],
        fail: (type, message) => toFrames(machine.abort(message, type)),
        reportedUsage: () => usage,
        deliveredText: () => delivered.text(),
      };
    },
  };
}
