// What to store for previous_response_id continuation: this turn's conversation (history + input, without
// instructions, which the API does not inherit) plus the assistant's reply as a Chat message.
import type { ChatAssistantMessage, ChatCompletion, ChatMessage } from "../../wire/chat/types.js";

export function convertChatMessagesForHistory(conversation: readonly ChatMessage[], assistant: ChatAssistantMessage | undefined): ChatMessage[] {
  const messages = [...conversation];
  const hasContent = assistant !== undefined && ((assistant.tool_calls?.length ?? 0) > 0 || (typeof assistant.content === "string" && assistant.content !== ""));
  if (assistant !== undefined && hasContent) messages.push(assistant);
  return messages;
}

/** The assistant turn of a non-streaming Chat response, in request-message form. */
export function convertChatResponseToAssistantMessage(response: ChatCompletion): ChatAssistantMessage | undefined {
  const message = response.choices?.[0]?.message;
  if (message === undefined) return undefined;
  const result: ChatAssistantMessage = { role: "assistant", content: message.content ?? null };
  if (message.tool_calls !== undefined && message.tool_calls.length > 0) result.tool_calls = message.tool_calls;
  if (typeof message.refusal === "string" && message.refusal !== "") result.refusal = message.refusal;
  // Signed thinking is kept so that previous_response_id continues an Anthropic tool loop.
  if (message.thinking_blocks !== undefined && message.thinking_blocks.length > 0) {
    result.thinking_blocks = message.thinking_blocks;
    result.reasoning_content = message.reasoning_content ?? "";
  }
  return result;
}
