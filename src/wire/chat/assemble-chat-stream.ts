// Folds Chat stream chunks into one ChatCompletion (choice 0): the reference for what a stream "said",
// used for history storage and logging, and by tests to check translated streams lose nothing.
import type { ChatCompletion, ChatCompletionChunk, ChatFinishReason, ChatThinkingBlock, ChatToolCall, ChatUsage } from "./types.js";

export function assembleChatStream(chunks: readonly ChatCompletionChunk[]): ChatCompletion {
  let content = "";
  let refusal = "";
  let reasoning = "";
  const thinkingBlocks: ChatThinkingBlock[] = [];
  let finishReason: ChatFinishReason | null = null;
  let usage: ChatUsage | null = null;
  const calls = new Map<number, ChatToolCall>();
  for (const chunk of chunks) {
    if (chunk.usage !== undefined && chunk.usage !== null) usage = chunk.usage;
    for (const choice of chunk.choices ?? []) {
      if (choice.index !== 0) continue;
      content += choice.delta?.content ?? "";
      refusal += choice.delta?.refusal ?? "";
      reasoning += choice.delta?.reasoning_content ?? "";
      thinkingBlocks.push(...(choice.delta?.thinking_blocks ?? []));
      for (const delta of choice.delta?.tool_calls ?? []) {
        const call = calls.get(delta.index) ?? { id: "", type: "function", function: { name: "", arguments: "" } };
        if (delta.id !== undefined) call.id = delta.id;
        if (delta.function?.name !== undefined && call.function.name === "") call.function.name = delta.function.name;
        call.function.arguments += delta.function?.arguments ?? "";
        calls.set(delta.index, call);
      }
      if (choice.finish_reason !== null && choice.finish_reason !== undefined) finishReason = choice.finish_reason;
    }
  }
  const first = chunks[0];
  const toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
  return {
    id: first?.id ?? "",
    object: "chat.completion",
    created: first?.created ?? 0,
    model: first?.model ?? "",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: content === "" && toolCalls.length > 0 ? null : content,
          refusal: refusal === "" ? null : refusal,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          ...(reasoning !== "" ? { reasoning_content: reasoning } : {}),
          ...(thinkingBlocks.length > 0 ? { thinking_blocks: thinkingBlocks } : {}),
        },
        finish_reason: finishReason,
        logprobs: null,
      },
    ],
    usage,
  };
}
