// POST /v1/chat/completions.
import { estimateChatPromptTokens } from "../../billing/estimate-tokens.js";
import type { ClientFormat } from "../client-format.js";
import { chatPlanOf, upstreamOf } from "../../upstreams/registry.js";
import { checkRequestBody, readModelField, readOutputTokens, readStreamFlag, withOutputLimit } from "../fields.js";
import { chatRequestSchema } from "../request-schemas.js";

// A client that set no limit gets max_tokens, the field every Chat upstream and translator reads.
const CHAT_LIMIT_FIELDS = ["max_completion_tokens", "max_tokens"];

export const chatFormat: ClientFormat = {
  route: "chat",
  errorShape: "openai",
  streamError: (type, message) => [{ data: { error: { message, type, param: null, code: type } } }],
  describe(body) {
    checkRequestBody(chatRequestSchema, body);
    return {
      model: readModelField(body),
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
