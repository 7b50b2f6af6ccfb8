// Anthropic stream events -> Chat chunks, for Chat clients on Anthropic upstreams. Each tool_use block
// becomes one Chat tool call with its own `index`; the stream ends with a finish_reason chunk and a
// usage chunk (choices: []) that the caller forwards only when the client asked for include_usage.
// Thinking streams as delta.reasoning_content; each thinking block is sent whole once it ends, as
// delta.thinking_blocks, because its signature arrives last.
import type { ChatCompletionChunk, ChatFinishReason, ChatUsage } from "../../wire/chat/types.js";
import { deriveId } from "../../wire/shared/ids.js";
import { isRecord } from "../../wire/shared/narrow.js";
import { convertAnthropicUsageToChat, type AnthropicUsageLike } from "../../wire/messages/convert-usage.js";
import { mapStopReasonToFinishReason } from "../../wire/messages/map-stop-reason.js";
import type { AnthropicStreamEvent } from "../../wire/messages/types.js";
import { ChatChunkStream, type ChatChunkIdentity, type ChatStreamItem } from "../chat-chunk-stream.js";

/** Without an id, the chunks' id is derived from the message id. */
export interface MessagesToChatStreamOptions extends ChatChunkIdentity {
  /** Model name to report; the upstream's when absent. */
  model?: string;
}

interface ToolBlock {
  toolIndex: number;
  receivedDelta: boolean;
  startInput: unknown;
}

type ThinkingBlockState = { type: "thinking"; thinking: string; signature: string } | { type: "redacted_thinking"; data: string };

export class MessagesEventsToChatStream extends ChatChunkStream<AnthropicStreamEvent> {
  private nextToolIndex = 0;
  private readonly toolBlocks = new Map<number, ToolBlock>();
  private readonly thinkingBlocks = new Map<number, ThinkingBlockState>();
  private thinkingText = "";
  private stopReason: string | null = null;
  private usage: AnthropicUsageLike = {};

  constructor(private readonly options: MessagesToChatStreamOptions = {}) {
    super(options, options.model ?? "");
  }

  override push(event: AnthropicStreamEvent): ChatStreamItem[] {
    if (this.ended) return [];
    switch (event.type) {
      case "message_start": {
        this.id ??= deriveId(event.message.id, ["msg_"], "chatcmpl-");
        if (this.options.model === undefined) this.model = event.message.model;
        this.mergeUsage(event.message.usage);
        return this.start();
      }
      case "content_block_start": {
        const out = this.start();
        const block = event.content_block;
        if (block.type === "text" && block.text !== "") out.push(this.chunk({ content: block.text }));
        if (block.type === "tool_use") {
          const toolIndex = this.nextToolIndex++;
          this.toolBlocks.set(event.index, { toolIndex, receivedDelta: false, startInput: block.input });
          out.push(this.chunk({ tool_calls: [{ index: toolIndex, id: block.id, type: "function", function: { name: block.name, arguments: "" } }] }));
        }
        if (block.type === "thinking") {
          this.thinkingBlocks.set(event.index, { type: "thinking", thinking: block.thinking ?? "", signature: block.signature ?? "" });
          if (block.thinking) out.push(this.reasoning(block.thinking));
        }
        if (block.type === "redacted_thinking") this.thinkingBlocks.set(event.index, { type: "redacted_thinking", data: block.data });
        return out;
      }
      case "content_block_delta": {
        const out = this.start();
        const delta = event.delta;
        if (delta.type === "text_delta" && delta.text !== "") out.push(this.chunk({ content: delta.text }));
        if (delta.type === "input_json_delta") {
          const tool = this.toolBlocks.get(event.index);
          if (tool !== undefined && delta.partial_json !== "") {
            tool.receivedDelta = true;
            out.push(this.chunk({ tool_calls: [{ index: tool.toolIndex, function: { arguments: delta.partial_json } }] }));
          }
        }
        const thinking = this.thinkingBlocks.get(event.index);
        if (thinking?.type === "thinking" && delta.type === "thinking_delta" && delta.thinking !== "") {
          thinking.thinking += delta.thinking;
          out.push(this.reasoning(delta.thinking));
        }
        if (thinking?.type === "thinking" && delta.type === "signature_delta") thinking.signature += delta.signature;
        return out;
      }
      case "content_block_stop": {
        const thinking = this.thinkingBlocks.get(event.index);
        if (thinking !== undefined) {
          this.thinkingBlocks.delete(event.index);
          return [...this.start(), this.chunk({ thinking_blocks: [thinking] })];
        }
        // A server that sends the whole input on the start block (and no deltas) still yields the arguments.
        const tool = this.toolBlocks.get(event.index);
        if (tool !== undefined && !tool.receivedDelta && isRecord(tool.startInput) && Object.keys(tool.startInput).length > 0) {
          return [this.chunk({ tool_calls: [{ index: tool.toolIndex, function: { arguments: JSON.stringify(tool.startInput) } }] })];
        }
        return [];
      }
      case "message_delta":
        if (event.delta.stop_reason !== null && event.delta.stop_reason !== undefined) this.stopReason = event.delta.stop_reason;
        this.mergeUsage(event.usage);
        return [];
      case "message_stop":
        return this.finish();
      case "error":
        return this.fail({ message: event.error.message, type: event.error.type, param: null, code: null });
      default:
        // ping and event types added after this was written.
        return [];
    }
  }

  protected override ending(): { finishReason: ChatFinishReason; usage: ChatUsage } {
    const finishReason: ChatFinishReason = this.stopReason === null && this.toolBlocks.size > 0 ? "tool_calls" : mapStopReasonToFinishReason(this.stopReason);
    return { finishReason, usage: convertAnthropicUsageToChat(this.usage, this.thinkingText) };
  }

  private reasoning(text: string): ChatCompletionChunk {
    this.thinkingText += text;
    return this.chunk({ reasoning_content: text });
  }

  /** Anthropic usage values are cumulative: later values overwrite earlier ones. */
  private mergeUsage(usage: AnthropicUsageLike | undefined): void {
    if (usage === undefined || usage === null) return;
    for (const key of ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"] as const) {
      const value = usage[key];
      if (typeof value === "number") this.usage[key] = value;
    }
    if (usage.output_tokens_details !== undefined && usage.output_tokens_details !== null) this.usage.output_tokens_details = usage.output_tokens_details;
    // Billed from (ledger): the cache writes by lifetime and the web searches, as last reported.
    if (isRecord(usage.cache_creation)) this.usage.cache_creation = usage.cache_creation;
    if (isRecord(usage.server_tool_use)) this.usage.server_tool_use = usage.server_tool_use;
  }
}
