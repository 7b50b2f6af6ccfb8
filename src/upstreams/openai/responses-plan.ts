// Responses clients to upstreams that speak Responses: a pass-through, the model renamed and usage
// read from the terminal event.
import type { ModelConfig } from "../../core/catalog.js";
import type { Usage } from "../../core/usage.js";
import { RESPONSES_TERMINAL_EVENTS } from "../../wire/responses/events.js";
import type { ClientFrame, StreamTranslator, UpstreamPlan } from "../plan.js";
import { parseEventJson } from "../usage-readers.js";

type Json = Record<string, unknown>;

interface ResponsesUsage {
  input_tokens?: number;
  output_tokens?: number;
  input_tokens_details?: { cached_tokens?: number };
  output_tokens_details?: { reasoning_tokens?: number };
}

/** The usage of a Responses object; its web search calls are its output items of type web_search_call. */
export function usageFromResponses(usage: ResponsesUsage | undefined | null, output?: unknown): Usage | null {
  if (!usage || typeof usage !== "object") return null;
  const items: unknown[] = Array.isArray(output) ? output : [];
  return {
    inputTokens: usage.input_tokens ?? 0,
    cachedInputTokens: usage.input_tokens_details?.cached_tokens ?? 0,
    outputTokens: usage.output_tokens ?? 0,
    reasoningTokens: usage.output_tokens_details?.reasoning_tokens ?? 0,
    webSearchCalls: items.filter((item) => typeof item === "object" && item !== null && (item as { type?: unknown }).type === "web_search_call").length,
    estimated: false,
  };
}

export function responsesPassThrough(body: Json, model: ModelConfig): UpstreamPlan {
  const stream = body.stream === true;
  return {
    path: "/responses",
    body: { ...body, model: model.upstreamModel },
    stream,
    warnings: [],
    fromUpstream(json) {
      const response = json as Json & { usage?: ResponsesUsage };
      return { body: { ...response, model: model.id }, usage: usageFromResponses(response.usage, response.output) };
    },
    streamTranslator(): StreamTranslator {
      let usage: Usage | null = null;
      let delivered = "";
      // The latest response object and sequence number, for a length stop the gateway writes itself.
      let latest: Json | null = null;
      let sequence = 0;
      return {
        push(event): ClientFrame[] {
          const data = parseEventJson(event.data) as Json & { type?: string; delta?: unknown; sequence_number?: unknown; response?: Json & { usage?: ResponsesUsage } };
          if (data.response) data.response = latest = { ...data.response, model: model.id };
          if (typeof data.sequence_number === "number") sequence = data.sequence_number;
          if (typeof data.delta === "string") delivered += data.delta;
          if (data.type && RESPONSES_TERMINAL_EVENTS.has(data.type)) {
            usage = usageFromResponses(data.response?.usage, data.response?.output);
            return [{ event: event.event ?? data.type, data, usageAt: "response.usage" }];
          }
          return [{ event: event.event ?? data.type, data }];
        },
        end: () => [],
        stopAtLimit: () => {
          const response = { ...latest, model: model.id, status: "incomplete", incomplete_details: { reason: "max_output_tokens" } };
          return [{ event: "response.incomplete", data: { type: "response.incomplete", sequence_number: sequence + 1, response } }];
        },
        fail: (_type, message) => [{ event: "error", data: { type: "error", code: "server_error", message, param: null } }],
        reportedUsage: () => usage,
        deliveredText: () => delivered,
      };
    },
  };
}
