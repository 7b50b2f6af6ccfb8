// Chat Completions stream -> Gemini streamGenerateContent chunks (each a GenerateContentResponse).
// Text and (asked-for) thoughts go out as they arrive, one part per chunk, as Gemini streams them;
// a function call goes out whole (Gemini never splits one), once its arguments are complete: when the
// next call starts or the stream finishes. The last chunk carries the finishReason and the
// usageMetadata, read from the Chat stream's usage chunk (which may follow the finish_reason chunk),
// so it is written by finish(). An error ends the stream with Google's in-band error object.
import { googleStreamError } from "../../errors/catalogue.js";
import type { ChatCompletionChunk, ChatFinishReason, ChatUsage } from "../../wire/chat/types.js";
import type { GeminiPart, GeminiResponse } from "../../wire/gemini/types.js";
import { isString } from "../../wire/shared/narrow.js";
import { convertChatUsageToGemini, functionCallPart, mapChatFinishReason } from "./convert-chat-response-to-gemini.js";

export interface ChatToGeminiStreamOptions {
  /** The gateway model id, reported as modelVersion. */
  model: string;
  includeThoughts: boolean;
}

interface OpenCall {
  id: string | undefined;
  name: string;
  arguments: string;
}

export type GeminiStreamItem = GeminiResponse | { error: unknown };

export class ChatStreamToGeminiChunks {
  private readonly calls = new Map<number, OpenCall>();
  private finishReason: ChatFinishReason | null = null;
  private usage: ChatUsage | null = null;
  private responseId: string | undefined;
  private ended = false;

  constructor(private readonly options: ChatToGeminiStreamOptions) {}

  push(chunk: ChatCompletionChunk): GeminiStreamItem[] {
    if (this.ended) return [];
    if (isString(chunk.id) && this.responseId === undefined) this.responseId = chunk.id;
    if (chunk.usage) this.usage = chunk.usage;
    const out: GeminiStreamItem[] = [];
    for (const choice of chunk.choices) {
      if (choice.index !== 0) continue;
      const delta = choice.delta as
        | {
            content?: string | null;
            reasoning_content?: string | null;
            refusal?: string | null;
            tool_calls?: Array<{ index: number; id?: string; function?: { name?: string; arguments?: string } }>;
          }
        | undefined;
      if (this.options.includeThoughts && isString(delta?.reasoning_content) && delta.reasoning_content !== "")
        out.push(this.chunkOf([{ text: delta.reasoning_content, thought: true }]));
      if (isString(delta?.content) && delta.content !== "") out.push(this.chunkOf([{ text: delta.content }]));
      if (isString(delta?.refusal) && delta.refusal !== "") out.push(this.chunkOf([{ text: delta.refusal }]));
      for (const call of delta?.tool_calls ?? []) {
        const open = this.calls.get(call.index);
        if (open === undefined) {
          // A new call: those before it are complete.
          out.push(...this.flushCalls());
          this.calls.set(call.index, { id: call.id, name: call.function?.name ?? "", arguments: call.function?.arguments ?? "" });
        } else {
          if (call.function?.name) open.name += call.function.name;
          if (call.function?.arguments) open.arguments += call.function.arguments;
        }
      }
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
    return out;
  }

  /** The stream ended: the last calls, then the chunk with the finish reason and usage. */
  finish(): GeminiStreamItem[] {
    if (this.ended) return [];
    this.ended = true;
    const calls = this.takeCalls();
    const last: GeminiResponse = {
      candidates: [{ ...(calls.length > 0 && { content: { role: "model", parts: calls } }), finishReason: mapChatFinishReason(this.finishReason), index: 0 }],
      usageMetadata: convertChatUsageToGemini(this.usage),
      modelVersion: this.options.model,
      ...(this.responseId !== undefined && { responseId: this.responseId }),
    };
    return [last];
  }

  /** Google's error object, in-band: the SDKs throw on a chunk that holds one. */
  abort(message: string, type: string): GeminiStreamItem[] {
    if (this.ended) return [];
    this.ended = true;
    return [googleStreamError(type, message)];
  }

  private flushCalls(): GeminiStreamItem[] {
    const parts = this.takeCalls();
    return parts.length > 0 ? [this.chunkOf(parts)] : [];
  }

  private takeCalls(): GeminiPart[] {
    const parts = [...this.calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => functionCallPart(call.id, call.name, call.arguments));
    this.calls.clear();
    return parts;
  }

  private chunkOf(parts: GeminiPart[]): GeminiResponse {
    return {
      candidates: [{ content: { role: "model", parts }, index: 0 }],
      modelVersion: this.options.model,
      ...(this.responseId !== undefined && { responseId: this.responseId }),
    };
  }
}
