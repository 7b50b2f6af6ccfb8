// Anthropic Message -> Chat Completions response (non-streaming), for Chat clients on Anthropic upstreams.
import type { ChatCompletion, ChatResponseMessage, ChatThinkingBlock, ChatToolCall } from "../../wire/chat/types.js";
import { deriveId, nowSeconds } from "../../wire/shared/ids.js";
import { convertAnthropicUsageToChat } from "../../wire/messages/convert-usage.js";
import { mapStopReasonToFinishReason } from "../../wire/messages/map-stop-reason.js";
import type { AnthropicMessage } from "../../wire/messages/types.js";

export interface MessagesToChatOptions {
  /** Chat id; derived from the message id ("msg_x" -> "chatcmpl-x") when absent. */
  id?: string;
  /** Unix seconds; now when absent. */
  created?: number;
  /** Model name to report; the upstream's when absent. */
  model?: string;
}

export function convertMessagesResponseToChat(message: AnthropicMessage, options: MessagesToChatOptions = {}): ChatCompletion {
  const texts: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  const thinkingBlocks: ChatThinkingBlock[] = [];
  for (const block of message.content ?? []) {
    if (block.type === "text") texts.push(block.text);
    else if (block.type === "tool_use") {
      toolCalls.push({ id: block.id, type: "function", function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
    } else if (block.type === "thinking") thinkingBlocks.push({ type: "thinking", thinking: block.thinking, signature: block.signature });
    else if (block.type === "redacted_thinking") thinkingBlocks.push({ type: "redacted_thinking", data: block.data });
  }
  const reasoning = thinkingText(thinkingBlocks);
  const chatMessage: ChatResponseMessage = {
    role: "assistant",
    content: texts.length > 0 ? texts.join("") : toolCalls.length > 0 ? null : "",
    refusal: null,
  };
  if (toolCalls.length > 0) chatMessage.tool_calls = toolCalls;
  if (thinkingBlocks.length > 0) {
    chatMessage.reasoning_content = reasoning;
    chatMessage.thinking_blocks = thinkingBlocks;
  }
  return {
    id: options.id ?? deriveId(message.id, ["msg_"], "chatcmpl-"),
    object: "chat.completion",
    created: options.created ?? nowSeconds(),
    model: options.model ?? message.model,
    choices: [{ index: 0, message: chatMessage, finish_reason: mapStopReasonToFinishReason(message.stop_reason), logprobs: null }],
    usage: convertAnthropicUsageToChat(message.usage, reasoning),
  };
}

/** The readable thinking: the text of the thinking blocks, in order (redacted ones have none). */
export function thinkingText(blocks: readonly ChatThinkingBlock[]): string {
  return blocks.map((block) => (block.type === "thinking" ? block.thinking : "")).join("");
}
