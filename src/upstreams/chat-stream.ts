// Parts every Chat plan shares: what the client asked for, how a Chat chunk becomes a client frame,
// and the text delivered so far (the estimate when an upstream reports no usage).
import type { ChatCompletionChunk } from "../wire/chat/index.js";
import type { ClientFrame } from "./plan.js";

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
