// Chat Completions clients: pass-through to OpenAI-compatible upstreams (model renamed, usage always
// requested), or translated both ways for Anthropic-native upstreams.
import type { ModelConfig } from "../../config/catalog.js";
import type { SseEvent } from "../../core/sse.js";
import {
  convertChatRequestToMessages,
  convertMessagesResponseToChat,
  MessagesEventsToChatStream,
  type AnthropicMessage,
  type AnthropicStreamEvent,
} from "../../formats/anthropic-messages/index.js";
import type { ChatCompletion, ChatCompletionChunk } from "../../formats/openai-chat/index.js";
import type { ClientFrame, StreamTranslator, UpstreamPlan } from "../plan.js";
import { parseEventJson, usageFromChat } from "./usage.js";

type Json = Record<string, unknown>;

export function clientAskedForUsage(body: Json): boolean {
  const options = body.stream_options;
  return !!options && typeof options === "object" && (options as Json).include_usage === true;
}

/**
 * A chunk that reports the request's usage: the usage chunk (no choices), or a finish chunk carrying
 * usage (some upstreams). Content chunks of upstreams that report usage on every chunk are not one,
 * so they are never held back for the cost (in-band-cost.ts).
 */
export function isUsageReport(chunk: ChatCompletionChunk): boolean {
  if (!chunk.usage || typeof chunk.usage !== "object") return false;
  const choices = chunk.choices ?? [];
  return choices.length === 0 || choices.some((choice) => choice.finish_reason !== null && choice.finish_reason !== undefined);
}

/** A translated Chat chunk as a frame; the usage chunk is marked to carry the cost. */
export function chatChunkFrame(chunk: ChatCompletionChunk): ClientFrame {
  return isUsageReport(chunk) ? { data: chunk, usageAt: "usage" } : { data: chunk };
}

/**
 * Collects delivered text and tool arguments for estimates when the upstream reports no usage.
 * Chunks passed through unparsed are kept as their text and only parsed if an estimate is needed.
 */
export class DeliveredText {
  /** Chunks not read yet; read (and dropped) by the next text(). */
  #chunks: Array<ChatCompletionChunk | string> = [];
  #text = "";
  addChunk(chunk: ChatCompletionChunk | string): void {
    this.#chunks.push(chunk);
  }
  /** The text so far; reads only the chunks added since the last call (an output limit asks after each event). */
  text(): string {
    if (this.#chunks.length === 0) return this.#text;
    const parts: string[] = [this.#text];
    for (const item of this.#chunks) {
      let chunk: ChatCompletionChunk;
      try {
        chunk = typeof item === "string" ? (JSON.parse(item) as ChatCompletionChunk) : item;
      } catch {
        continue;
      }
      for (const choice of chunk.choices ?? []) {
        const delta = choice.delta;
        if (!delta) continue;
        if (typeof delta.content === "string") parts.push(delta.content);
        for (const call of delta.tool_calls ?? []) {
          if (call.function?.name) parts.push(call.function.name);
          if (call.function?.arguments) parts.push(call.function.arguments);
        }
      }
    }
    this.#chunks = [];
    this.#text = parts.join("");
    return this.#text;
  }
}

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

export function chatToAnthropic(body: Json, model: ModelConfig): UpstreamPlan {
  const stream = body.stream === true;
  const wantsUsage = clientAskedForUsage(body);
  const { request, warnings } = convertChatRequestToMessages(body, {
    defaultMaxTokens: model.defaultOutputTokens,
    maxOutputTokens: model.maxOutputTokens,
    cacheBreakpoints: (model.promptCaching ?? "auto") === "auto" ? "auto" : "off",
  });
  return {
    path: "/v1/messages",
    body: { ...request, model: model.upstreamModel, stream },
    stream,
    warnings,
    outputLimit: request.max_tokens,
    fromUpstream(json) {
      const completion = convertMessagesResponseToChat(json as AnthropicMessage, { model: model.id });
      return { body: completion, usage: usageFromChat(completion.usage) };
    },
    streamTranslator(): StreamTranslator {
      const machine = new MessagesEventsToChatStream({ model: model.id });
      const delivered = new DeliveredText();
      let usage: ReturnType<typeof usageFromChat> = null;
      const toFrames = (items: ReturnType<MessagesEventsToChatStream["push"]>): ClientFrame[] => {
        const frames: ClientFrame[] = [];
        for (const item of items) {
          if ("error" in item) {
            frames.push({ data: item });
            continue;
          }
          if (item.usage && item.choices.length === 0) {
            usage = usageFromChat(item.usage);
            if (!wantsUsage) continue;
          }
          delivered.addChunk(item);
          frames.push(chatChunkFrame(item));
        }
        return frames;
      };
      return {
        push: (event) => toFrames(machine.push(parseEventJson(event.data) as AnthropicStreamEvent)),
        end: () => [...toFrames(machine.finish()), { data: "[DONE]", raw: true }],
        fail: (type, message) => toFrames(machine.abort(message, type)),
        reportedUsage: () => usage,
        deliveredText: () => delivered.text(),
      };
    },
  };
}
