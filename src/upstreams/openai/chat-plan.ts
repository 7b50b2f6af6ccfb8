// Chat Completions clients to OpenAI-compatible upstreams: a pass-through, the model renamed and
// usage always requested.
import type { ModelConfig } from "../../core/catalog.js";
import type { SseEvent } from "../../core/sse.js";
import type { ChatCompletion, ChatCompletionChunk } from "../../wire/chat/index.js";
import { clientAskedForUsage, DeliveredText, isUsageReport } from "../chat-stream.js";
import type { ClientFrame, StreamTranslator, UpstreamPlan } from "../plan.js";
import { parseEventJson, usageFromChat } from "../usage-readers.js";

type Json = Record<string, unknown>;

const MODEL_FIELD = /"model"\s*:\s*"[^"]*"/y;
const NULL_USAGE_FIELD = /,\s*"usage"\s*:\s*null(?=\s*[,}])|"usage"\s*:\s*null\s*,/;

/**
 * The pass-through fast path: a chunk's JSON text with only its model renamed (and a `"usage":null`
 * removed for a client that did not ask for usage), without parsing or re-serialising it — most of
 * a stream's CPU otherwise. Only for plain content chunks: no backslash (so a quote or key in the
 * text is a real one), exactly one "model" key, at the top level before any nested value, no "error",
 * and "usage" only as null. Anything else returns null and takes the parsed path. The result is still
 * scrubbed (encodeFrames).
 */
export function renameModelInChunkText(data: string, modelJson: string, keepNullUsage: boolean): string | null {
  if (data.charCodeAt(0) !== 0x7b || data.charCodeAt(data.length - 1) !== 0x7d || data.includes("\\") || data.includes('"error"')) return null;
  const at = data.indexOf('"model"');
  if (at < 0 || data.indexOf('"model"', at + 7) >= 0) return null;
  // Top level only: no object or array opens before it (providers send "model" before "choices").
  const brace = data.indexOf("{", 1);
  const bracket = data.indexOf("[");
  if ((brace >= 0 && brace < at) || (bracket >= 0 && bracket < at)) return null;
  MODEL_FIELD.lastIndex = at;
  const field = MODEL_FIELD.exec(data);
  if (!field) return null;
  let out = `${data.slice(0, at)}"model":${modelJson}${data.slice(at + field[0].length)}`;
  const usageAt = out.indexOf('"usage"');
  if (usageAt >= 0) {
    if (out.indexOf('"usage"', usageAt + 7) >= 0) return null;
    const nullUsage = NULL_USAGE_FIELD.exec(out);
    if (!nullUsage) return null;
    if (!keepNullUsage) out = out.slice(0, nullUsage.index) + out.slice(nullUsage.index + nullUsage[0].length);
  }
  return out;
}

export function chatToOpenAiChat(body: Json, model: ModelConfig): UpstreamPlan {
  const stream = body.stream === true;
  const wantsUsage = clientAskedForUsage(body);
  const upstreamBody: Json = { ...body, model: model.upstreamModel };
  if (stream) upstreamBody.stream_options = { ...(body.stream_options as Json | undefined), include_usage: true };
  return {
    path: "/chat/completions",
    body: upstreamBody,
    stream,
    warnings: [],
    fromUpstream(json) {
      const completion = json as ChatCompletion;
      return { body: { ...completion, model: model.id }, usage: usageFromChat(completion.usage) };
    },
    streamTranslator(): StreamTranslator {
      const delivered = new DeliveredText();
      const modelJson = JSON.stringify(model.id);
      let usage: ReturnType<typeof usageFromChat> = null;
      // The stream's id and created, for a length stop the gateway writes itself (stopAtLimit).
      let identity: { id: unknown; created: unknown } | null = null;
      return {
        push(event: SseEvent): ClientFrame[] {
          if (event.data === "[DONE]") return [];
          if (identity === null) {
            const first = parseEventJson(event.data) as { id?: unknown; created?: unknown } | null;
            identity = { id: first?.id ?? "chatcmpl-gateway", created: first?.created ?? Math.floor(Date.now() / 1000) };
          }
          const passed = renameModelInChunkText(event.data, modelJson, wantsUsage);
          if (passed !== null) {
            delivered.addChunk(event.data);
            return [{ data: passed, jsonText: true }];
          }
          const chunk = parseEventJson(event.data) as ChatCompletionChunk & { error?: unknown };
          if (chunk.error) return [{ data: chunk }];
          if (chunk.usage) usage = usageFromChat(chunk.usage);
          // The usage chunk we asked for on the client's behalf is not shown to a client that did not.
          if (!wantsUsage && chunk.usage && (chunk.choices?.length ?? 0) === 0) return [];
          delivered.addChunk(chunk);
          const out: Json = { ...chunk, model: model.id };
          if (!wantsUsage) delete out.usage;
          return [wantsUsage && isUsageReport(chunk) ? { data: out, usageAt: "usage" } : { data: out }];
        },
        end: () => [{ data: "[DONE]", raw: true }],
        stopAtLimit: () => [
          {
            data: {
              id: identity?.id ?? "chatcmpl-gateway",
              object: "chat.completion.chunk",
              created: identity?.created ?? Math.floor(Date.now() / 1000),
              model: model.id,
              choices: [{ index: 0, delta: {}, finish_reason: "length" }],
            },
          },
          { data: "[DONE]", raw: true },
        ],
        fail: (type, message) => [{ data: { error: { message, type, param: null, code: type } } }],
        reportedUsage: () => usage,
        deliveredText: () => delivered.text(),
      };
    },
  };
}
