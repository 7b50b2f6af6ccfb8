// POST /v1beta/models/{model}:generateContent and :streamGenerateContent (Google's Gemini API).
// The model and the stream choice are in the path, so a format is made per request for them.
// Errors use Google's envelope (renderError, shape "google").
import type { ClientFormat } from "../client-format.js";
import { chatPlanOf, upstreamOf } from "../../upstreams/registry.js";
import { googleStreamError } from "../../errors/catalogue.js";
import { checkRequestBody } from "../fields.js";
import type { OutputTokenField } from "../../upstreams/plan.js";
import { estimateGeminiPromptTokens, geminiOverChat } from "./gemini-over-chat.js";
import { geminiRequestSchema } from "./request-schema.js";

export const GEMINI_OUTPUT_FIELD = "generationConfig.maxOutputTokens";

export interface GeminiCall {
  /** The gateway model id from the path (its `models/` prefix removed). */
  model: string;
  stream: boolean;
  /** streamGenerateContent without alt=sse: the stream is one JSON array, as Google's REST API writes it. */
  jsonArray: boolean;
}

export function geminiFormat(call: GeminiCall): ClientFormat {
  return {
    route: "generate_content",
    errorShape: "google",
    streamError: (type, message) => [{ data: googleStreamError(type, message) }],
    streamEncoding: call.jsonArray ? "json_array" : "sse",
    describe(body) {
      const checked = checkRequestBody(geminiRequestSchema, body);
      const limit = checked.generationConfig?.maxOutputTokens ?? null;
      const outputTokenFields: OutputTokenField[] = limit === null ? [] : [{ field: GEMINI_OUTPUT_FIELD, value: limit }];
      return { model: call.model, stream: call.stream, maxOutputTokens: limit, outputTokenFields, promptTokens: estimateGeminiPromptTokens(body) };
    },
    limitOutput(body, outputTokens) {
      const config = typeof body.generationConfig === "object" && body.generationConfig !== null ? body.generationConfig : {};
      return { ...body, generationConfig: { ...config, maxOutputTokens: outputTokens } };
    },
    plan(body, model) {
      const upstream = upstreamOf(model.provider);
      const native = upstream.nativePlans.gemini;
      if (native) return native(body, model, { stream: call.stream });
      return geminiOverChat(body, model, chatPlanOf(model.provider), { stream: call.stream, reasoningEffort: upstream.capabilities.chatReasoningEffort });
    },
  };
}
