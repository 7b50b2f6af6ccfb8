// Parts every Chat plan shares: what the client asked for, how a Chat chunk becomes a client frame,
// the text delivered so far (the estimate when an upstream reports no usage), and the stream
// translator over a decoder into Chat chunks.
import type { SseEvent } from "../core/sse.js";
import type { Usage } from "../core/usage.js";
import type { ChatCompletionChunk } from "../wire/chat/index.js";
import type { ChatChunkStream, ChatStreamItem } from "./chat-chunk-stream.js";
import type { ClientFrame, StreamTranslator } from "./plan.js";
import { usageFromChat } from "./usage-readers.js";

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

export interface ChatChunkTranslatorOptions<Event> {
  /** The client asked for include_usage: only then does it see the usage chunk. */
  wantsUsage: boolean;
  /** An upstream event as the decoder takes it. */
  read(event: SseEvent): Event;
  /**
   * Usage as reported so far, for a decoder whose usage chunk comes only at finish(), after
   * settlement; absent: the usage chunk's.
   */
  reportedUsage?: () => Usage | null;
}

/** A Chat plan's stream translator over a decoder of upstream events into Chat chunks (chat-chunk-stream.ts). */
export function chatChunkTranslator<Event>(decoder: ChatChunkStream<Event>, options: ChatChunkTranslatorOptions<Event>): StreamTranslator {
  const delivered = new DeliveredText();
  let usage: Usage | null = null;
  const toFrames = (items: ChatStreamItem[]): ClientFrame[] => {
    const frames: ClientFrame[] = [];
    for (const item of items) {
      if ("error" in item) {
        frames.push({ data: item });
        continue;
      }
      if (item.usage && item.choices.length === 0) {
        usage = usageFromChat(item.usage);
        if (!options.wantsUsage) continue;
      }
      delivered.addChunk(item);
      frames.push(chatChunkFrame(item));
    }
    return frames;
  };
  return {
    push: (event) => toFrames(decoder.push(options.read(event))),
    end: () => [...toFrames(decoder.finish()), { data: "[DONE]", raw: true }],
    fail: (type, message) => toFrames(decoder.abort(message, type)),
    reportedUsage: options.reportedUsage ?? (() => usage),
    deliveredText: () => delivered.text(),
  };
}
