// Gemini streamGenerateContent (alt=sse) -> Chat chunks. Each event is a whole GenerateContentResponse
// holding the new text since the previous one (thought summaries become delta.reasoning_content),
// whole function calls, and usage so far (the last event's is final). The stream ends with a
// finish_reason chunk and a usage chunk (choices: []) that the caller forwards only when the client
// asked for include_usage.
import type { ChatChunkDelta, ChatCompletionChunk, ChatStreamError, ChatUsage } from "../../wire/chat/types.js";
import { deriveId, nowSeconds } from "../../wire/shared/ids.js";
import { isRecord, isString } from "../../wire/shared/narrow.js";
import { blockedPrompt, mapFinishReason, readCandidate, ToolCallIds } from "./convert-gemini-response-to-chat.js";
import { convertGeminiUsageToChat } from "./convert-usage.js";
import type { GeminiErrorBody, GeminiResponse, GeminiUsageMetadata } from "./types.js";

export type GeminiChatStreamItem = ChatCompletionChunk | ChatStreamError;

export interface GeminiToChatStreamOptions {
  /** Chat id for every chunk; random when absent. */
  id?: string;
  /** Unix seconds for every chunk; now when absent. */
  created?: number;
  /** Model name to report. */
  model: string;
  /** Seed of the tool call ids; random when absent (fixed in golden tests). */
  callIdSeed?: string;
}

export class GeminiChunksToChatStream {
  private readonly id: string;
  private readonly created: number;
  private readonly ids: ToolCallIds;
  private started = false;
  private done = false;
  private toolCalls = 0;
  private finishReason: string | undefined;
  private blocked = false;
  private usage: GeminiUsageMetadata | undefined;

  constructor(private readonly options: GeminiToChatStreamOptions) {
    this.id = options.id ?? deriveId(undefined, [], "chatcmpl-");
    this.created = options.created ?? nowSeconds();
    this.ids = new ToolCallIds(options.callIdSeed);
  }

  push(event: GeminiResponse | GeminiErrorBody): GeminiChatStreamItem[] {
    if (this.done) return [];
    if ("error" in event && isRecord(event.error)) {
      this.done = true;
      const error = event.error;
      return [
        { error: { message: isString(error.message) ? error.message : "upstream error", type: "provider_error", param: null, code: isString(error.status) ? error.status : null } },
      ];
    }
    const response = event as GeminiResponse;
    if (isRecord(response.usageMetadata)) this.usage = response.usageMetadata;
    if (blockedPrompt(response)) this.blocked = true;
    const candidate = response.candidates?.[0];
    if (isString(candidate?.finishReason)) this.finishReason = candidate.finishReason;
    const { text, reasoning, calls } = readCandidate(candidate);
    const out = this.start();
    if (reasoning !== "") out.push(this.chunk({ reasoning_content: reasoning }));
    if (text !== "") out.push(this.chunk({ content: text }));
    for (const call of calls) {
      const index = this.toolCalls++;
      out.push(this.chunk({ tool_calls: [{ index, id: this.ids.idFor(index, call.name), type: "function", function: call }] }));
    }
    return out;
  }

  /** End of the upstream stream: the finish chunk and the usage chunk, if not yet sent. */
  finish(): GeminiChatStreamItem[] {
    if (this.done) return [];
    const out = this.start();
    this.done = true;
    const finishReason = this.blocked ? "content_filter" : mapFinishReason(this.finishReason, this.toolCalls > 0);
    out.push({ ...this.chunk({}), choices: [{ index: 0, delta: {}, finish_reason: finishReason, logprobs: null }] });
    out.push({ ...this.chunk({}), choices: [], usage: convertGeminiUsageToChat(this.usage) });
    return out;
  }

  /**
   * Usage as reported so far (each event's usageMetadata is cumulative), null before any: the
   * gateway settles before it asks for the closing frames, so this cannot wait for finish().
   */
  reportedUsage(): ChatUsage | null {
    return this.usage === undefined ? null : convertGeminiUsageToChat(this.usage);
  }

  /** Upstream failed mid-stream: the Chat in-band error payload. */
  abort(message: string, type = "provider_error"): GeminiChatStreamItem[] {
    if (this.done) return [];
    this.done = true;
    return [{ error: { message, type, param: null, code: null } }];
  }

  private start(): ChatCompletionChunk[] {
    if (this.started) return [];
    this.started = true;
    return [this.chunk({ role: "assistant", content: "" })];
  }

  private chunk(delta: ChatChunkDelta): ChatCompletionChunk {
    return { id: this.id, object: "chat.completion.chunk", created: this.created, model: this.options.model, choices: [{ index: 0, delta, finish_reason: null, logprobs: null }] };
  }
}
