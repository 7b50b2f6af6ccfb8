// POST /v1/messages (Anthropic Messages). Errors use the Anthropic envelope.
import type { ClientFormat } from "../client-format.js";
import { chatPlanOf, upstreamOf } from "../../upstreams/registry.js";
import { estimateMessagesPromptTokens, messagesOverChat } from "./messages-over-chat.js";
import { checkRequestBody, readModelField, readOutputTokens, readStreamFlag, withOutputLimit } from "../fields.js";
import { messagesRequestSchema } from "../request-schemas.js";

export const messagesFormat: ClientFormat = {
  route: "messages",
  errorShape: "anthropic",
  streamError: (type, message) => [{ event: "error", data: { type: "error", error: { type, message } } }],
  describe(body) {
    checkRequestBody(messagesRequestSchema, body);
    return {
      model: readModelField(body),
      stream: readStreamFlag(body),
      ...readOutputTokens(body, ["max_tokens"]),
      promptTokens: estimateMessagesPromptTokens(body),
    };
  },
  limitOutput: (body, outputTokens) => withOutputLimit(body, ["max_tokens"], "max_tokens", outputTokens),
  plan(body, model) {
    const upstream = upstreamOf(model.provider);
    const native = upstream.nativePlans.messages;
    return native ? native(body, model) : messagesOverChat(body, model, chatPlanOf(model.provider), upstream.capabilities.chatReasoningEffort);
  },
};
