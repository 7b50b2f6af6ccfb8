// Bedrock Converse response -> Chat completion: text blocks joined, toolUse blocks as tool_calls,
// reasoningContent blocks as reasoning_content and, signed or redacted, as thinking_blocks.
import type { ChatCompletion, ChatResponseMessage, ChatThinkingBlock, ChatToolCall } from "../../wire/chat/types.js";
import { deriveId, nowSeconds } from "../../wire/shared/ids.js";
import { isRecord, isString } from "../../wire/shared/narrow.js";
import { convertConverseUsageToChat, mapConverseStopReason } from "./convert-usage.js";
import type { ConverseResponse } from "./types.js";

export interface ConverseToChatOptions {
  /** The model name to report (Converse answers do not name one). */
  model: string;
  id?: string;
  created?: number;
}

export function convertConverseResponseToChat(response: ConverseResponse, options: ConverseToChatOptions): ChatCompletion {
  const texts: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  let reasoning = "";
  const thinkingBlocks: ChatThinkingBlock[] = [];
  for (const block of response.output?.message?.content ?? []) {
    if (!isRecord(block)) continue;
    if (isString(block.text)) texts.push(block.text);
    const thought = readReasoningBlock(block.reasoningContent);
    if (thought !== null) {
      reasoning += thought.text;
      if (thought.block !== null) thinkingBlocks.push(thought.block);
    }
    const use = block.toolUse;
    if (isRecord(use) && isString(use.name)) {
      const id = isString(use.toolUseId) ? use.toolUseId : deriveId(undefined, [], "call_");
      toolCalls.push({ id, type: "function", function: { name: use.name, arguments: JSON.stringify(use.input ?? {}) } });
    }
  }
  const finishReason = response.stopReason === undefined && toolCalls.length > 0 ? "tool_calls" : mapConverseStopReason(response.stopReason);
  const message: ChatResponseMessage = { role: "assistant", content: texts.length > 0 ? texts.join("") : null };
  if (reasoning !== "") message.reasoning_content = reasoning;
  if (thinkingBlocks.length > 0) message.thinking_blocks = thinkingBlocks;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: options.id ?? deriveId(undefined, [], "chatcmpl-"),
    object: "chat.completion",
    created: options.created ?? nowSeconds(),
    model: options.model,
    choices: [
      {
        index: 0,
        message,
        finish_reason: finishReason,
        logprobs: null,
      },
    ],
    usage: convertConverseUsageToChat(response.usage, reasoning),
  };
}

/**
 * A reasoningContent block: its readable text, and the block a client sends back to continue a tool
 * loop (Claude checks the signature): signed text as a thinking block, encrypted reasoning as a
 * redacted_thinking one, unsigned text as none. Null when the value is not a reasoning block.
 */
export function readReasoningBlock(value: unknown): { text: string; block: ChatThinkingBlock | null } | null {
  if (!isRecord(value)) return null;
  if (isString(value.redactedContent)) return { text: "", block: { type: "redacted_thinking", data: value.redactedContent } };
  const reasoningText = value.reasoningText;
  if (!isRecord(reasoningText) || !isString(reasoningText.text)) return null;
  const signature = reasoningText.signature;
  return { text: reasoningText.text, block: isString(signature) && signature !== "" ? { type: "thinking", thinking: reasoningText.text, signature } : null };
}
