// Chat Completions clients to Anthropic-native upstreams: translated both ways.
import type { ModelConfig } from "../../core/catalog.js";
import type { AnthropicMessage, AnthropicStreamEvent } from "../../wire/messages/types.js";
import { chatChunkTranslator, clientAskedForUsage } from "../chat-stream.js";
import type { UpstreamPlan } from "../plan.js";
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
    streamTranslator: () =>
      chatChunkTranslator(new MessagesEventsToChatStream({ model: model.id }), { wantsUsage, read: (event) => parseEventJson(event.data) as AnthropicStreamEvent }),
  };
}
