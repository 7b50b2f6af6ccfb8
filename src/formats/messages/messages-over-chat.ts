// Messages (Anthropic) clients bridged over the upstream's Chat plan.
import { estimateTextTokens } from "../../billing/estimate-tokens.js";
import type { ModelConfig } from "../../core/catalog.js";
import type { ClientFrame, UpstreamPlan } from "../../upstreams/plan.js";
import { bridgeOverChat, type ChatBridge } from "../bridge-over-chat.js";
import { ChatStreamToMessagesEvents } from "./chat-stream-to-messages-events.js";
import { convertChatResponseToMessages } from "./convert-chat-response-to-messages.js";
import { convertMessagesRequestToChat } from "./convert-messages-request-to-chat.js";

type Json = Record<string, unknown>;

/**
 * The gateway's estimate of a Messages prompt: system, messages and tool definitions, as text. It is
 * what admission holds for, and what a bridged stream's message_start reports before the upstream's
 * count arrives.
 */
export function estimateMessagesPromptTokens(body: Json): number {
  return estimateTextTokens(JSON.stringify([body.system ?? "", body.messages ?? [], body.tools ?? []]));
}

/** Messages over the upstream's Chat plan (the translated request is a Chat request); `reasoningEffort`: that plan carries reasoning_effort. */
export function messagesOverChat(body: Json, model: ModelConfig, chatPlan: (body: Json, model: ModelConfig) => UpstreamPlan, reasoningEffort = false): UpstreamPlan {
  const { request, warnings } = convertMessagesRequestToChat(body, { reasoningEffort, keepCacheControl: model.promptCaching === "forward" });
  if (request.stream) request.stream_options = { include_usage: true };
  const bridge: ChatBridge = {
    fromChatCompletion: (completion) => convertChatResponseToMessages(completion, { model: model.id }),
    stream() {
      const machine = new ChatStreamToMessagesEvents({ model: model.id, inputTokensEstimate: estimateMessagesPromptTokens(body) });
      const frames = (events: ReturnType<ChatStreamToMessagesEvents["push"]>): ClientFrame[] =>
        events.map((e) => (e.type === "message_delta" ? { event: e.type, data: e, usageAt: "usage" } : { event: e.type, data: e }));
      return {
        push: (chunk) => frames(machine.push(chunk)),
        finish: () => frames(machine.finish()),
        abort: (type, message) => frames(machine.abort(message, type)),
      };
    },
  };
  return bridgeOverChat(chatPlan(request, model), bridge, warnings);
}
