// Chat stream chunks -> Anthropic stream events (wire-formats.md §3.8). Fed parsed chunks one at a time;
// returns typed events, the HTTP layer frames them as SSE. Blocks never interleave: a text block is
// closed before a tool block opens, and each tool call (by Chat index) gets its own block. Reasoning
// (delta.reasoning_content, and signed delta.thinking_blocks from an upstream that bridges Anthropic)
// becomes thinking blocks ahead of the text.
import { ToolCallSequencer, type ToolCallOperation } from "../../wire/chat/sequence-tool-call-deltas.js";
import type { ChatCompletionChunk, ChatThinkingBlock, ChatUsage } from "../../wire/chat/types.js";
import { deriveId } from "../../wire/shared/ids.js";
import { convertChatUsageToAnthropic } from "../../wire/messages/convert-usage.js";
import { mapFinishReasonToStopReason } from "../../wire/messages/map-stop-reason.js";
import type { AnthropicStopReason, AnthropicStreamEvent } from "../../wire/messages/types.js";

export interface ChatStreamToMessagesOptions {
  /** Message id; derived from the first chunk's id when absent. */
  id?: string;
  /** Model name to report; the upstream's when absent. */
  model?: string;
  /**
   * The prompt's input tokens as the gateway estimates them, for message_start when the upstream has
   * not counted them yet (Chat reports usage at the end). Clients such as LangChain read the input
   * count from message_start; the exact count follows in message_delta.
   */
  inputTokensEstimate?: number;
}

type Phase = "idle" | "streaming" | "choice-finished" | "done";

export class ChatStreamToMessagesEvents {
  private phase: Phase = "idle";
  private nextBlockIndex = 0;
  private textBlockIndex: number | undefined;
  private thinkingBlockIndex: number | undefined;
  private readonly toolBlockIndex = new Map<number, number>();
  private readonly tools = new ToolCallSequencer();
  private finishReason: string | null = null;
  private matchedStop: unknown;
  private usage: ChatUsage | undefined;

  constructor(private readonly options: ChatStreamToMessagesOptions = {}) {}

  push(chunk: ChatCompletionChunk): AnthropicStreamEvent[] {
    if (this.phase === "done") return [];
    // Azure opens with a chunk of prompt_filter_results alone (no choices, id ""): the message starts
    // with the next chunk, whose id it is derived from.
    if (this.phase === "idle" && (chunk.choices?.length ?? 0) === 0 && (chunk.usage ?? null) === null) return [];
    const events = this.start(chunk);
    if (chunk.usage !== undefined && chunk.usage !== null) this.usage = chunk.usage;
    // Only choice 0 is translated: Anthropic has no n>1.
    const choice = chunk.choices?.find((c) => c.index === 0) ?? (chunk.choices?.length === 1 ? chunk.choices[0] : undefined);
    if (choice !== undefined && this.phase === "streaming") {
      const delta = choice.delta ?? {};
      if (typeof delta.reasoning_content === "string" && delta.reasoning_content !== "") events.push(...this.appendThinking(delta.reasoning_content));
      if (Array.isArray(delta.thinking_blocks)) for (const block of delta.thinking_blocks) events.push(...this.addThinkingBlock(block));
      const text = (delta.content ?? "") + (delta.refusal ?? "");
      if (text !== "") events.push(...this.appendText(text));
      if (delta.tool_calls !== undefined && delta.tool_calls.length > 0) {
        events.push(...this.applyToolOps(this.tools.push(delta.tool_calls)));
      }
      if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
        this.finishReason = choice.finish_reason;
        this.matchedStop = choice.stop_reason;
        events.push(...this.closeBlocks());
        this.phase = "choice-finished";
      }
    }
    // The usage chunk (choices: []) follows the finish_reason chunk; some upstreams put usage on the finish chunk.
    if (this.phase === "choice-finished" && this.usage !== undefined) events.push(...this.end());
    return events;
  }

  /** End of the upstream stream: emits whichever closing events are still missing. */
  finish(): AnthropicStreamEvent[] {
    if (this.phase === "done") return [];
    const events = this.start(undefined);
    events.push(...this.closeBlocks(), ...this.end());
    return events;
  }

  /** Upstream failed mid-stream: an in-band error event; nothing else is emitted afterwards. */
  abort(message: string, type = "api_error"): AnthropicStreamEvent[] {
    if (this.phase === "done") return [];
    this.phase = "done";
    return [{ type: "error", error: { type, message } }];
  }

  private startUsage(chunk: ChatCompletionChunk | undefined) {
    if (chunk?.usage) return { ...convertChatUsageToAnthropic(chunk.usage), output_tokens: 0 };
    return { input_tokens: this.options.inputTokensEstimate ?? 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  }

  private start(chunk: ChatCompletionChunk | undefined): AnthropicStreamEvent[] {
    if (this.phase !== "idle") return [];
    this.phase = "streaming";
    return [
      {
        type: "message_start",
        message: {
          id: this.options.id ?? deriveId(chunk?.id, ["chatcmpl-"], "msg_"),
          type: "message",
          role: "assistant",
          model: this.options.model ?? chunk?.model ?? "",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          // The best input count known now: the upstream's when its first chunk carries usage, else the
          // estimate; the exact counts go in message_delta.
          usage: this.startUsage(chunk),
        },
      },
    ];
  }

  private appendThinking(text: string): AnthropicStreamEvent[] {
    const events = [...this.applyToolOps(this.tools.closeOpen()), ...this.closeText()];
    if (this.thinkingBlockIndex === undefined) {
      this.thinkingBlockIndex = this.nextBlockIndex++;
      events.push({ type: "content_block_start", index: this.thinkingBlockIndex, content_block: { type: "thinking", thinking: "", signature: "" } });
    }
    events.push({ type: "content_block_delta", index: this.thinkingBlockIndex, delta: { type: "thinking_delta", thinking: text } });
    return events;
  }

  /** A whole block from thinking_blocks: signs the thinking streamed so far, or arrives on its own. */
  private addThinkingBlock(block: ChatThinkingBlock): AnthropicStreamEvent[] {
    if (block.type === "redacted_thinking") {
      const events = [...this.closeThinking(), ...this.applyToolOps(this.tools.closeOpen()), ...this.closeText()];
      const index = this.nextBlockIndex++;
      events.push({ type: "content_block_start", index, content_block: { type: "redacted_thinking", data: block.data } }, { type: "content_block_stop", index });
      return events;
    }
    const events = this.thinkingBlockIndex === undefined ? this.appendThinking(block.thinking) : [];
    return [...events, ...this.closeThinking(block.signature)];
  }

  private closeThinking(signature = ""): AnthropicStreamEvent[] {
    if (this.thinkingBlockIndex === undefined) return [];
    const index = this.thinkingBlockIndex;
    this.thinkingBlockIndex = undefined;
    const events: AnthropicStreamEvent[] = [];
    if (signature !== "") events.push({ type: "content_block_delta", index, delta: { type: "signature_delta", signature } });
    events.push({ type: "content_block_stop", index });
    return events;
  }

  private appendText(text: string): AnthropicStreamEvent[] {
    const events = [...this.closeThinking(), ...this.applyToolOps(this.tools.closeOpen())];
    if (this.textBlockIndex === undefined) {
      this.textBlockIndex = this.nextBlockIndex++;
      events.push({ type: "content_block_start", index: this.textBlockIndex, content_block: { type: "text", text: "" } });
    }
    events.push({ type: "content_block_delta", index: this.textBlockIndex, delta: { type: "text_delta", text } });
    return events;
  }

  private applyToolOps(ops: ToolCallOperation[]): AnthropicStreamEvent[] {
    const events: AnthropicStreamEvent[] = [];
    for (const op of ops) {
      switch (op.kind) {
        case "start": {
          events.push(...this.closeThinking(), ...this.closeText());
          const index = this.nextBlockIndex++;
          this.toolBlockIndex.set(op.key, index);
          events.push({ type: "content_block_start", index, content_block: { type: "tool_use", id: op.id, name: op.name, input: {} } });
          break;
        }
        case "arguments": {
          const index = this.toolBlockIndex.get(op.key);
          if (index !== undefined) events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: op.fragment } });
          break;
        }
        case "end": {
          const index = this.toolBlockIndex.get(op.key);
          if (index !== undefined) events.push({ type: "content_block_stop", index });
          break;
        }
      }
    }
    return events;
  }

  private closeText(): AnthropicStreamEvent[] {
    if (this.textBlockIndex === undefined) return [];
    const index = this.textBlockIndex;
    this.textBlockIndex = undefined;
    return [{ type: "content_block_stop", index }];
  }

  private closeBlocks(): AnthropicStreamEvent[] {
    return [...this.closeThinking(), ...this.closeText(), ...this.applyToolOps(this.tools.flush())];
  }

  private end(): AnthropicStreamEvent[] {
    this.phase = "done";
    const { stopReason, stopSequence } = this.stopReason();
    const usage = convertChatUsageToAnthropic(this.usage);
    return [{ type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: stopSequence }, usage }, { type: "message_stop" }];
  }

  private stopReason(): { stopReason: AnthropicStopReason; stopSequence: string | null } {
    return mapFinishReasonToStopReason(this.finishReason, {
      matchedStop: this.matchedStop,
      hasToolCalls: this.toolBlockIndex.size > 0,
    });
  }
}
