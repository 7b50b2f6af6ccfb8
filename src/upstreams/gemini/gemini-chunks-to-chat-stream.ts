// Gemini streamGenerateContent (alt=sse) -> Chat chunks. Each event is a whole GenerateContentResponse
// holding the new text since the previous one (thought summaries become delta.reasoning_content),
// whole function calls, and usage so far (the last event's is final). The stream ends with a
// finish_reason chunk and a usage chunk (choices: []) that the caller forwards only when the client
// asked for include_usage.
import type { ChatFinishReason, ChatUsage } from "../../wire/chat/types.js";
import { isRecord, isString } from "../../wire/shared/narrow.js";
import { blockedPrompt, mapFinishReason, readCandidate, ToolCallIds } from "./convert-gemini-response-to-chat.js";
import { convertGeminiUsageToChat } from "./convert-usage.js";
import type { GeminiErrorBody, GeminiResponse, GeminiUsageMetadata } from "../../wire/gemini/types.js";
import { ChatChunkStream, type ChatChunkIdentity, type ChatStreamItem } from "../chat-chunk-stream.js";

export interface GeminiToChatStreamOptions extends ChatChunkIdentity {
  /** Model name to report. */
  model: string;
  /** Seed of the tool call ids; random when absent (fixed in golden tests). */
  callIdSeed?: string;
}

export class GeminiChunksToChatStream extends ChatChunkStream<GeminiResponse | GeminiErrorBody> {
  private readonly ids: ToolCallIds;
  private toolCalls = 0;
  private finishReason: string | undefined;
  private blocked = false;
  private usage: GeminiUsageMetadata | undefined;

  constructor(options: GeminiToChatStreamOptions) {
    super(options, options.model);
    this.ids = new ToolCallIds(options.callIdSeed);
  }

  override push(event: GeminiResponse | GeminiErrorBody): ChatStreamItem[] {
    if (this.ended) return [];
    if ("error" in event && isRecord(event.error)) {
      const error = event.error;
      return this.fail({
        message: isString(error.message) ? error.message : "upstream error",
        type: "provider_error",
        param: null,
        code: isString(error.status) ? error.status : null,
      });
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

  protected override ending(): { finishReason: ChatFinishReason; usage: ChatUsage } {
    return { finishReason: this.blocked ? "content_filter" : mapFinishReason(this.finishReason, this.toolCalls > 0), usage: convertGeminiUsageToChat(this.usage) };
  }

  /**
   * Usage as reported so far (each event's usageMetadata is cumulative), null before any: the
   * gateway settles before it asks for the closing frames, so this cannot wait for finish().
   */
  reportedUsage(): ChatUsage | null {
    return this.usage === undefined ? null : convertGeminiUsageToChat(this.usage);
  }
}
