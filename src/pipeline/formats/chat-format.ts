// POST /v1/chat/completions.
import { estimateChatPromptTokens } from "../../billing/estimate-tokens.js";
import { invalidRequest } from "../../errors/catalogue.js";
import type { ClientFormat } from "../client-format.js";
import { chatPlanOf, upstreamOf } from "../../upstreams/registry.js";
import { readModelField, readOutputTokens, readStreamFlag, withOutputLimit } from "./fields.js";

// A client that set no limit gets max_tokens, the field every Chat upstream and translator reads.
const CHAT_LIMIT_FIELDS = ["max_completion_tokens", "max_tokens"];

export const chatFormat: ClientFormat = {
  route: "chat",
  errorShape: "openai",
  describe(body) {
    const model = readModelField(body);
    if (!Array.isArray(body.messages) || body.messages.length === 0) throw invalidRequest("messages", "messages must be a non-empty array.");
    body.messages.forEach((message, i) => {
      if (!message || typeof message !== "object" || typeof (message as { role?: unknown }).role !== "string") {
        throw invalidRequest(`messages[${i}].role`, `messages[${i}] must be an object with a role.`);
      }
    });
    return {
      model,
      stream: readStreamFlag(body),
      ...readOutputTokens(body, CHAT_LIMIT_FIELDS),
      promptTokens: estimateChatPromptTokens(body.messages),
    };
  },
  limitOutput: (body, outputTokens) => withOutputLimit(body, CHAT_LIMIT_FIELDS, "max_tokens", outputTokens),
  plan(body, model) {
    const native = upstreamOf(model.provider).nativePlans.chat;
    return native ? native(body, model) : chatPlanOf(model.provider)(body, model);
  },
};
