// ConverseStream events -> Chat chunks. Text blocks start with their first delta; a toolUse block
// announces its id and name on contentBlockStart and streams its input as partial JSON. The stop
// reason (messageStop) comes before the usage (metadata), so the finish and usage chunks are sent
// when the stream ends; the caller forwards the usage chunk only when the client asked for it.
// Reasoning streams as delta.reasoning_content; a signed (or redacted) reasoning block is sent whole
// in delta.thinking_blocks when it stops, since its signature comes last.
import type { ChatFinishReason, ChatThinkingBlock, ChatUsage } from "../../wire/chat/types.js";
import { deriveId } from "../../wire/shared/ids.js";
import { isNumber, isString } from "../../wire/shared/narrow.js";
import { convertConverseUsageToChat, mapConverseStopReason } from "./convert-usage.js";
import type { ConverseStreamEvent, ConverseUsage } from "./types.js";
import { ChatChunkStream, type ChatChunkIdentity, type ChatStreamItem } from "../chat-chunk-stream.js";

export interface ConverseToChatStreamOptions extends ChatChunkIdentity {
  model: string;
}

export class ConverseEventsToChatStream extends ChatChunkStream<ConverseStreamEvent> {
  private nextToolIndex = 0;
  /** contentBlockIndex -> Chat tool call index. */
  private readonly toolBlocks = new Map<number, number>();
  private stopReason: string | null = null;
  private usage: ConverseUsage | null = null;
  /** contentBlockIndex -> the reasoning block being streamed. */
  private readonly reasoningBlocks = new Map<number, { text: string; signature: string; redacted: string }>();
  private reasoningText = "";

  constructor(options: ConverseToChatStreamOptions) {
    super(options, options.model);
  }

  override push(event: ConverseStreamEvent): ChatStreamItem[] {
    if (this.ended) return [];
    switch (event.type) {
      case "messageStart":
        return this.start();
      case "contentBlockStart": {
        const out = this.start();
        const use = event.payload.start?.toolUse;
        if (use !== undefined && isString(use.name)) {
          const toolIndex = this.nextToolIndex++;
          this.toolBlocks.set(event.payload.contentBlockIndex ?? 0, toolIndex);
          const id = isString(use.toolUseId) ? use.toolUseId : deriveId(undefined, [], "call_");
          out.push(this.chunk({ tool_calls: [{ index: toolIndex, id, type: "function", function: { name: use.name, arguments: "" } }] }));
        }
        return out;
      }
      case "contentBlockDelta": {
        const out = this.start();
        const delta = event.payload.delta;
        if (isString(delta?.text) && delta.text !== "") out.push(this.chunk({ content: delta.text }));
        const reasoning = delta?.reasoningContent;
        if (reasoning !== undefined && reasoning !== null) {
          const index = event.payload.contentBlockIndex ?? 0;
          const block = this.reasoningBlocks.get(index) ?? { text: "", signature: "", redacted: "" };
          this.reasoningBlocks.set(index, block);
          if (isString(reasoning.text) && reasoning.text !== "") {
            block.text += reasoning.text;
            this.reasoningText += reasoning.text;
            out.push(this.chunk({ reasoning_content: reasoning.text }));
          }
          if (isString(reasoning.signature)) block.signature += reasoning.signature;
          if (isString(reasoning.redactedContent)) block.redacted += reasoning.redactedContent;
        }
        const input = delta?.toolUse?.input;
        const toolIndex = this.toolBlocks.get(event.payload.contentBlockIndex ?? 0);
        if (isString(input) && input !== "" && toolIndex !== undefined) out.push(this.chunk({ tool_calls: [{ index: toolIndex, function: { arguments: input } }] }));
        return out;
      }
      case "contentBlockStop": {
        const index = event.payload.contentBlockIndex ?? 0;
        const block = this.reasoningBlocks.get(index);
        if (block === undefined) return [];
        this.reasoningBlocks.delete(index);
        const whole: ChatThinkingBlock | null =
          block.redacted !== ""
            ? { type: "redacted_thinking", data: block.redacted }
            : block.signature !== ""
              ? { type: "thinking", thinking: block.text, signature: block.signature }
              : null;
        return whole === null ? [] : [...this.start(), this.chunk({ thinking_blocks: [whole] })];
      }
      case "messageStop":
        if (isString(event.payload.stopReason)) this.stopReason = event.payload.stopReason;
        return [];
      case "metadata":
        if (event.payload.usage !== undefined && Object.values(event.payload.usage).some(isNumber)) this.usage = event.payload.usage;
        return [];
      default:
        // Event types added after this was written.
        return [];
    }
  }

  /** Usage as reported so far (null until the metadata event). */
  reportedUsage(): ConverseUsage | null {
    return this.usage;
  }

  protected override ending(): { finishReason: ChatFinishReason; usage: ChatUsage } {
    const finishReason: ChatFinishReason = this.stopReason === null && this.toolBlocks.size > 0 ? "tool_calls" : mapConverseStopReason(this.stopReason);
    return { finishReason, usage: convertConverseUsageToChat(this.usage, this.reasoningText) };
  }
}
