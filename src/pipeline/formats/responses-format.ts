// POST /v1/responses (OpenAI Responses).
import { estimateTextTokens } from "../../billing/estimate-tokens.js";
import type { ResponsesStore } from "../../store/responses-store.js";
import type { ClientFormat } from "../client-format.js";
import { responsesOverChat, responsesPassThrough } from "../plans/responses-plans.js";
import { readModelField, readOutputTokens, readStreamFlag } from "./fields.js";

export function responsesFormat(responses: ResponsesStore): ClientFormat {
  return {
    route: "responses",
    errorShape: "openai",
    describe(body) {
      return {
        model: readModelField(body),
        stream: readStreamFlag(body),
        ...readOutputTokens(body, ["max_output_tokens"]),
        promptTokens: estimateTextTokens(JSON.stringify([body.instructions ?? "", body.input ?? "", body.tools ?? []])),
      };
    },
    plan(body, model, context) {
      if (model.provider.type === "openai" && model.provider.apis.has("responses")) return responsesPassThrough(body, model);
      return responsesOverChat(body, model, context.accountId, responses);
    },
  };
}
