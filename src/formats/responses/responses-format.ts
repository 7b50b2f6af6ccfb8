// POST /v1/responses (OpenAI Responses).
import { estimateTextTokens } from "../../billing/estimate-tokens.js";
import type { ResponsesStore } from "../../store/responses-store.js";
import type { ClientFormat } from "../client-format.js";
import { chatPlanOf, upstreamOf } from "../../upstreams/registry.js";
import { responsesOverChat } from "./responses-over-chat.js";
import { checkRequestBody, readModelField, readOutputTokens, readStreamFlag, withOutputLimit } from "../fields.js";
import { responsesRequestSchema } from "../request-schemas.js";

export function responsesFormat(responses: ResponsesStore): ClientFormat {
  return {
    route: "responses",
    errorShape: "openai",
    streamError: (type, message) => [{ event: "error", data: { type: "error", code: type, message, param: null } }],
    describe(body) {
      checkRequestBody(responsesRequestSchema, body);
      return {
        model: readModelField(body),
        stream: readStreamFlag(body),
        ...readOutputTokens(body, ["max_output_tokens"]),
        promptTokens: estimateTextTokens(JSON.stringify([body.instructions ?? "", body.input ?? "", body.tools ?? []])),
      };
    },
    limitOutput: (body, outputTokens) => withOutputLimit(body, ["max_output_tokens"], "max_output_tokens", outputTokens),
    plan(body, model, context) {
      const upstream = upstreamOf(model.provider);
      const native = upstream.nativePlans.responses;
      if (native && model.provider.apis.has("responses")) return native(body, model);
      const chat = { chatPlan: chatPlanOf(model.provider), reasoningEffort: upstream.capabilities.chatReasoningEffort };
      return responsesOverChat(body, model, context.accountId, responses, chat);
    },
  };
}
