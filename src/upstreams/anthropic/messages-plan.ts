// Messages (Anthropic) clients to Anthropic-native upstreams: a pass-through, the model renamed and
// usage read from the stream.
import type { ModelConfig } from "../../core/catalog.js";
import type { Usage } from "../../core/usage.js";
import type { AnthropicMessage } from "../../wire/messages/types.js";
import type { ClientFrame, StreamTranslator, UpstreamPlan } from "../plan.js";
import { parseEventJson, splitCacheWrites } from "../usage-readers.js";

type Json = Record<string, unknown>;

interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number | null;
  /** All cache writes; cache_creation splits them by lifetime (absent: all 5-minute writes). */
  cache_creation_input_tokens?: number | null;
  cache_creation?: { ephemeral_5m_input_tokens?: number | null; ephemeral_1h_input_tokens?: number | null } | null;
  server_tool_use?: { web_search_requests?: number | null } | null;
}

/** Anthropic's usage: input_tokens leaves out the cache reads and writes, which Usage.inputTokens includes. */
export function usageFromAnthropic(usage: AnthropicUsage | undefined | null): Usage | null {
  if (!usage || typeof usage !== "object") return null;
  const cached = usage.cache_read_input_tokens ?? 0;
  const { write5m, write1h } = splitCacheWrites(
    usage.cache_creation_input_tokens ?? undefined,
    usage.cache_creation?.ephemeral_5m_input_tokens,
    usage.cache_creation?.ephemeral_1h_input_tokens,
  );
  return {
    inputTokens: (usage.input_tokens ?? 0) + cached + write5m + write1h,
    cachedInputTokens: cached,
    cacheWrite5mTokens: write5m,
    cacheWrite1hTokens: write1h,
    outputTokens: usage.output_tokens ?? 0,
    reasoningTokens: 0,
    webSearchCalls: usage.server_tool_use?.web_search_requests ?? 0,
    estimated: false,
  };
}

export function messagesToAnthropic(body: Json, model: ModelConfig): UpstreamPlan {
  const stream = body.stream === true;
  return {
    path: "/v1/messages",
    body: { ...body, model: model.upstreamModel },
    stream,
    warnings: [],
    fromUpstream(json) {
      const message = json as AnthropicMessage & { usage?: AnthropicUsage };
      return { body: { ...message, model: model.id }, usage: usageFromAnthropic(message.usage) };
    },
    streamTranslator(): StreamTranslator {
      let usage: AnthropicUsage = {};
      let sawDelta = false;
      const delivered: string[] = [];
      return {
        push(event): ClientFrame[] {
          const data = parseEventJson(event.data) as Json & { type?: string; message?: Json & { usage?: AnthropicUsage }; usage?: AnthropicUsage; delta?: Json };
          switch (data.type) {
            case "message_start":
              if (data.message) {
                usage = { ...usage, ...data.message.usage };
                data.message = { ...data.message, model: model.id };
              }
              break;
            case "message_delta":
              sawDelta = true;
              usage = { ...usage, ...data.usage };
              return [{ event: event.event ?? data.type, data, usageAt: "usage" }];
            case "content_block_delta": {
              const delta = data.delta as { text?: unknown; partial_json?: unknown } | undefined;
              if (typeof delta?.text === "string") delivered.push(delta.text);
              if (typeof delta?.partial_json === "string") delivered.push(delta.partial_json);
              break;
            }
            default:
              break;
          }
          return [{ event: event.event ?? data.type, data }];
        },
        end: () => [],
        fail: (type, message) => [{ event: "error", data: { type: "error", error: { type, message } } }],
        reportedUsage: () => (sawDelta ? usageFromAnthropic(usage) : null),
        deliveredText: () => delivered.join(""),
      };
    },
  };
}
