// Bedrock Converse response -> Chat completion: text blocks joined, toolUse blocks as tool_calls.
import type { ChatCompletion, ChatToolCall } from "../openai-chat/types.js";
import { deriveId, nowSeconds } from "../shared/ids.js";
import { isRecord, isString } from "../shared/narrow.js";
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
  for (const block of response.output?.message?.content ?? []) {
    if (!isRecord(block)) continue;
    if (isString(block.text)) texts.push(block.text);
    const use = block.toolUse;
    if (isRecord(use) && isString(use.name)) {
      const id = isString(use.toolUseId) ? use.toolUseId : deriveId(undefined, [], "call_");
      toolCalls.push({ id, type: "function", function: { name: use.name, arguments: JSON.stringify(use.input ?? {}) } });
    }
  }
  const finishReason = response.stopReason === undefined && toolCalls.length > 0 ? "tool_calls" : mapConverseStopReason(response.stopReason);
  return {
    id: options.id ?? deriveId(undefined, [], "chatcmpl-"),
    object: "chat.completion",
    created: options.created ?? nowSeconds(),
    model: options.model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: texts.length > 0 ? texts.join("") : null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        finish_reason: finishReason,
        logprobs: null,
      },
    ],
    usage: convertConverseUsageToChat(response.usage),
  };
}
