// Chat Completions response -> Anthropic Message (non-streaming), for Messages clients on Chat upstreams.
import type { ChatCompletion } from "../../wire/chat/types.js";
import { deriveId } from "../../wire/shared/ids.js";
import { parseJsonObject } from "../../wire/shared/narrow.js";
import { convertChatUsageToAnthropic } from "../../wire/messages/convert-usage.js";
import { mapFinishReasonToStopReason } from "../../wire/messages/map-stop-reason.js";
import type { AnthropicContentBlock, AnthropicMessage } from "../../wire/messages/types.js";

export interface ChatToMessagesOptions {
  /** Message id; derived from the chat id ("chatcmpl-x" -> "msg_x") when absent. */
  id?: string;
  /** Model name to report, usually the name the client asked for; the upstream's when absent. */
  model?: string;
}

export function convertChatResponseToMessages(response: ChatCompletion, options: ChatToMessagesOptions = {}): AnthropicMessage {
  const choice = response.choices?.[0];
  const message = choice?.message;
  const content: AnthropicContentBlock[] = [];
  // Signed blocks (an upstream that bridges Anthropic) as they are; bare reasoning text unsigned.
  const signed = message?.thinking_blocks ?? [];
  if (signed.length > 0) content.push(...signed);
  else if (typeof message?.reasoning_content === "string" && message.reasoning_content !== "") {
    content.push({ type: "thinking", thinking: message.reasoning_content, signature: "" });
  }
  const text = typeof message?.content === "string" ? message.content : "";
  if (text !== "") content.push({ type: "text", text });
  // Anthropic has no refusal text field; the refusal is what the model said, so it is text.
  if (typeof message?.refusal === "string" && message.refusal !== "") {
    content.push({ type: "text", text: message.refusal });
  }
  for (const call of message?.tool_calls ?? []) {
    // Invalid JSON arguments become {}: the client's tool then reports the missing input itself.
    content.push({ type: "tool_use", id: call.id, name: call.function.name, input: parseJsonObject(call.function.arguments).value });
  }
  const { stopReason, stopSequence } = mapFinishReasonToStopReason(choice?.finish_reason, {
    matchedStop: choice?.stop_reason,
    hasToolCalls: content.some((block) => block.type === "tool_use"),
  });
  return {
    id: options.id ?? deriveId(response.id, ["chatcmpl-"], "msg_"),
    type: "message",
    role: "assistant",
    model: options.model ?? response.model,
    content,
    stop_reason: stopReason,
    stop_sequence: stopSequence,
    usage: convertChatUsageToAnthropic(response.usage),
  };
}
