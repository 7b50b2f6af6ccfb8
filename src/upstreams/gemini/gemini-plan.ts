// Gemini API clients on Gemini-native upstreams: a pass-through. The body goes as the client sent it
// (thought signatures, safety settings and every other field untouched) to the upstream model's
// path; the answer comes back with modelVersion renamed to the gateway's model id and without the
// upstream's responseId (which names the operator's upstream request). Scrubbing is the pipeline's.
import type { ModelConfig } from "../../core/catalog.js";
import { googleStreamError } from "../../errors/catalogue.js";
import type { GeminiResponse, GeminiUsageMetadata } from "../../wire/gemini/types.js";
import type { ClientFrame, StreamTranslator, UpstreamPlan } from "../plan.js";
import { parseEventJson, usageFromChat } from "../usage-readers.js";
import { geminiPath } from "./chat-plan.js";
import { convertGeminiUsageToChat } from "./convert-usage.js";

type Json = Record<string, unknown>;

function renamed(response: GeminiResponse, model: ModelConfig): GeminiResponse {
  const rest = { ...response };
  delete rest.responseId;
  if (rest.modelVersion !== undefined) rest.modelVersion = model.id;
  return rest;
}

/**
 * A Gemini API client's :countTokens on the upstream's own counter: `contents` as sent, or a whole
 * `generateContentRequest` with its `model` renamed to the upstream's (the API requires the field).
 */
export function geminiCountTokensPassThrough(body: Json, model: ModelConfig): { path: string; body: Json } {
  const upstreamModel = model.upstreamModel.replace(/^models\//, "");
  const inner = body.generateContentRequest;
  const request = typeof inner === "object" && inner !== null && !Array.isArray(inner) ? { ...body, generateContentRequest: { ...inner, model: `models/${upstreamModel}` } } : body;
  return { path: `/v1beta/models/${encodeURIComponent(upstreamModel)}:countTokens`, body: request };
}

export function geminiPassThrough(body: Json, model: ModelConfig, call: { stream: boolean }): UpstreamPlan {
  return {
    path: geminiPath(model.upstreamModel, call.stream),
    body,
    stream: call.stream,
    warnings: [],
    fromUpstream(json) {
      const response = json as GeminiResponse;
      return { body: renamed(response, model), usage: response.usageMetadata ? usageFromChat(convertGeminiUsageToChat(response.usageMetadata)) : null };
    },
    streamTranslator(): StreamTranslator {
      let usage: GeminiUsageMetadata | undefined;
      const delivered: string[] = [];
      return {
        push(event): ClientFrame[] {
          const data = parseEventJson(event.data) as GeminiResponse & { error?: unknown };
          if (data.error !== undefined) return [{ data }];
          // Each event's usageMetadata is the total so far: the last one is the answer's.
          if (data.usageMetadata) usage = data.usageMetadata;
          for (const part of data.candidates?.[0]?.content?.parts ?? []) {
            if (typeof part.text === "string") delivered.push(part.text);
            if (part.functionCall) delivered.push(JSON.stringify(part.functionCall.args ?? {}));
          }
          return [{ data: renamed(data, model) }];
        },
        end: () => [],
        fail: (type, message) => [{ data: googleStreamError(type, message) }],
        reportedUsage: () => (usage ? usageFromChat(convertGeminiUsageToChat(usage)) : null),
        deliveredText: () => delivered.join(""),
      };
    },
  };
}
