// Anthropic thinking as Responses reasoning items: out in a buffered answer, and back in as input so
// that a tool loop continues with the signed blocks (Codex with store: false, or previous_response_id).
import { describe, expect, it } from "vitest";
import type { ChatCompletion, ChatThinkingBlock } from "../../wire/chat/types.js";
import { encodeThinkingBlocks } from "../../wire/shared/reasoning.js";
import { convertChatMessagesForHistory, convertChatResponseToAssistantMessage } from "./convert-chat-messages-for-history.js";
import { convertChatResponseToResponses } from "./convert-chat-response-to-responses.js";
import { convertResponsesRequestToChat } from "./convert-responses-request-to-chat.js";

const BLOCKS: ChatThinkingBlock[] = [
  { type: "thinking", thinking: "List the files first.", signature: "sig-A" },
  { type: "redacted_thinking", data: "ENCRYPTED" },
];

const CHAT: ChatCompletion = {
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1760000000,
  model: "claude",
  choices: [
    {
      index: 0,
      finish_reason: "tool_calls",
      message: {
        role: "assistant",
        content: null,
        reasoning_content: "List the files first.",
        thinking_blocks: BLOCKS,
        tool_calls: [{ id: "toolu_1", type: "function", function: { name: "shell", arguments: '{"cmd":"ls"}' } }],
      },
    },
  ],
  usage: { prompt_tokens: 90, completion_tokens: 30, total_tokens: 120, prompt_tokens_details: { cached_tokens: 64 }, completion_tokens_details: { reasoning_tokens: 6 } },
};

describe("reasoning items", () => {
  it("a buffered answer starts with a reasoning item: the thinking as summary, the signed blocks as encrypted_content", () => {
    const response = convertChatResponseToResponses(CHAT, { id: "resp_1", clock: () => 1760000001 });
    expect(response.output[0]).toEqual({
      type: "reasoning",
      id: "rs_1",
      summary: [{ type: "summary_text", text: "List the files first." }],
      status: "completed",
      encrypted_content: encodeThinkingBlocks(BLOCKS),
    });
    expect(response.output[1]).toMatchObject({ type: "function_call", call_id: "toolu_1" });
    expect(response.usage).toMatchObject({ input_tokens_details: { cached_tokens: 64 }, output_tokens_details: { reasoning_tokens: 6 } });
  });

  it("sent back as input, the item's blocks become the thinking_blocks of the assistant turn after it", () => {
    const output = convertChatResponseToResponses(CHAT, { id: "resp_1" }).output;
    const { request, warnings } = convertResponsesRequestToChat(
      {
        model: "claude",
        input: [{ role: "user", content: "What is here?" }, ...output, { type: "function_call_output", call_id: "toolu_1", output: "a.txt" }],
        reasoning: { effort: "medium" },
      },
      { upstreamAcceptsReasoningEffort: true },
    );
    expect(warnings).toEqual([]);
    expect(request.reasoning_effort).toBe("medium");
    expect(request.messages[1]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "toolu_1", type: "function", function: { name: "shell", arguments: '{"cmd":"ls"}' } }],
      thinking_blocks: BLOCKS,
      reasoning_content: "List the files first.",
    });
  });

  it("interleaved thinking between two calls starts a new assistant message for the second call", () => {
    const second: ChatThinkingBlock[] = [{ type: "thinking", thinking: "Now the size.", signature: "sig-B" }];
    const { request } = convertResponsesRequestToChat({
      model: "claude",
      input: [
        { role: "user", content: "Go" },
        { type: "reasoning", id: "rs_1", summary: [], encrypted_content: encodeThinkingBlocks(BLOCKS) },
        { type: "function_call", call_id: "c1", name: "shell", arguments: "{}" },
        { type: "reasoning", id: "rs_2", summary: [], encrypted_content: encodeThinkingBlocks(second) },
        { type: "function_call", call_id: "c2", name: "shell", arguments: "{}" },
      ],
    });
    const assistants = request.messages.filter((m) => m.role === "assistant");
    expect(assistants.map((m) => [m.thinking_blocks, m.tool_calls?.map((c) => c.id)])).toEqual([
      [BLOCKS, ["c1"]],
      [second, ["c2"]],
    ]);
  });

  it("another provider's encrypted_content is dropped with a warning; a damaged one of ours is refused", () => {
    const foreign = convertResponsesRequestToChat({
      model: "m",
      input: [
        { type: "reasoning", id: "rs", summary: [], encrypted_content: "gAAAAB..." },
        { role: "user", content: "hi" },
      ],
    });
    expect(foreign.warnings.join("\n")).toMatch(/reasoning items without this gateway's encrypted_content: dropped/);
    const damaged = encodeThinkingBlocks(BLOCKS).slice(0, -6) + "!!!!!!";
    expect(() => convertResponsesRequestToChat({ model: "m", input: [{ type: "reasoning", id: "rs", summary: [], encrypted_content: damaged }] })).toThrow(/encrypted_content/);
    const forged = encodeThinkingBlocks([{ type: "thinking", thinking: "x" } as unknown as ChatThinkingBlock]);
    expect(() => convertResponsesRequestToChat({ model: "m", input: [{ type: "reasoning", id: "rs", summary: [], encrypted_content: forged }] })).toThrow(/encrypted_content\[0\]/);
  });

  it("the stored history (previous_response_id) keeps the signed blocks", () => {
    const history = convertChatMessagesForHistory([{ role: "user", content: "What is here?" }], convertChatResponseToAssistantMessage(CHAT));
    expect(history[1]).toMatchObject({ role: "assistant", thinking_blocks: BLOCKS, reasoning_content: "List the files first." });
  });
});
