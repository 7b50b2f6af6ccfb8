import { describe, expect, it } from "vitest";
import type { ChatCompletion } from "../../wire/chat/types.js";
import { convertChatResponseToMessages } from "./convert-chat-response-to-messages.js";
import { convertMessagesResponseToChat } from "../../upstreams/anthropic/convert-messages-response-to-chat.js";
import type { AnthropicMessage } from "../../wire/messages/types.js";

const CHAT: ChatCompletion = {
  id: "chatcmpl-9x",
  object: "chat.completion",
  created: 1760000000,
  model: "gpt-4o",
  choices: [
    {
      index: 0,
      finish_reason: "tool_calls",
      logprobs: null,
      message: {
        role: "assistant",
        content: "Checking.",
        refusal: null,
        tool_calls: [
          { id: "call_a1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
          { id: "call_b2", type: "function", function: { name: "broken", arguments: '{"city":' } },
        ],
      },
    },
  ],
  usage: { prompt_tokens: 61, completion_tokens: 17, total_tokens: 78, prompt_tokens_details: { cached_tokens: 20 } },
};

describe("convertChatResponseToMessages", () => {
  it("maps text, tool calls (invalid JSON -> {}), stop reason and usage", () => {
    expect(convertChatResponseToMessages(CHAT, { model: "claude-alias" })).toEqual({
      id: "msg_9x",
      type: "message",
      role: "assistant",
      model: "claude-alias",
      content: [
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "call_a1", name: "get_weather", input: { city: "Oslo" } },
        { type: "tool_use", id: "call_b2", name: "broken", input: {} },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 41, output_tokens: 17, cache_creation_input_tokens: 0, cache_read_input_tokens: 20 },
    });
  });

  it.each([
    ["stop", "end_turn"],
    ["length", "max_tokens"],
    ["content_filter", "refusal"],
  ] as const)("maps finish_reason %s to %s", (finish, stop) => {
    const response: ChatCompletion = { ...CHAT, choices: [{ index: 0, finish_reason: finish, message: { role: "assistant", content: "x" } }] };
    expect(convertChatResponseToMessages(response).stop_reason).toBe(stop);
  });
});

describe("convertMessagesResponseToChat", () => {
  const message: AnthropicMessage = {
    id: "msg_01AB",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5",
    content: [
      { type: "thinking", thinking: "hmm", signature: "s" },
      { type: "text", text: "Let me check." },
      { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Oslo" } },
    ],
    stop_reason: "tool_use",
    stop_sequence: null,
    usage: { input_tokens: 412, output_tokens: 57, cache_creation_input_tokens: 0, cache_read_input_tokens: 100 },
  };

  it("maps text, tool_use, thinking, finish_reason and usage (cache reads counted in prompt_tokens)", () => {
    expect(convertMessagesResponseToChat(message, { created: 1760000000 })).toEqual({
      id: "chatcmpl-01AB",
      object: "chat.completion",
      created: 1760000000,
      model: "claude-sonnet-4-5",
      choices: [
        {
          index: 0,
          finish_reason: "tool_calls",
          logprobs: null,
          message: {
            role: "assistant",
            content: "Let me check.",
            refusal: null,
            tool_calls: [{ id: "toolu_01", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
            reasoning_content: "hmm",
            thinking_blocks: [{ type: "thinking", thinking: "hmm", signature: "s" }],
          },
        },
      ],
      usage: {
        prompt_tokens: 512,
        completion_tokens: 57,
        total_tokens: 569,
        prompt_tokens_details: { cached_tokens: 100 },
        // No thinking count from Anthropic: estimated from the 3 characters of thinking.
        completion_tokens_details: { reasoning_tokens: 1 },
      },
    });
  });

  it("keeps redacted thinking and Anthropic's own thinking count, and reports cache writes", () => {
    const redacted: AnthropicMessage = {
      ...message,
      content: [{ type: "redacted_thinking", data: "ENCRYPTED" }, ...message.content],
      usage: { input_tokens: 10, output_tokens: 57, cache_creation_input_tokens: 300, cache_read_input_tokens: 0, output_tokens_details: { thinking_tokens: 40 } },
    };
    const chat = convertMessagesResponseToChat(redacted, { created: 1760000000 });
    expect(chat.choices[0]!.message.thinking_blocks).toEqual([
      { type: "redacted_thinking", data: "ENCRYPTED" },
      { type: "thinking", thinking: "hmm", signature: "s" },
    ]);
    expect(chat.usage).toEqual({
      prompt_tokens: 310,
      completion_tokens: 57,
      total_tokens: 367,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 300 },
      completion_tokens_details: { reasoning_tokens: 40 },
    });
  });

  it("round-trips signed thinking: Anthropic -> Chat -> Anthropic keeps every block and its signature", () => {
    const back = convertChatResponseToMessages(convertMessagesResponseToChat(message));
    expect(back.content).toEqual(message.content);
  });

  it("turns bare reasoning_content (a Chat upstream such as DeepSeek) into an unsigned thinking block", () => {
    const reasoning: ChatCompletion = { ...CHAT, choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "42", reasoning_content: "Think." } }] };
    expect(convertChatResponseToMessages(reasoning).content).toEqual([
      { type: "thinking", thinking: "Think.", signature: "" },
      { type: "text", text: "42" },
    ]);
  });

  it("round-trips a Chat response through Anthropic and back without losing text, calls or token totals", () => {
    const valid: ChatCompletion = {
      ...CHAT,
      choices: [{ ...CHAT.choices[0]!, message: { ...CHAT.choices[0]!.message, tool_calls: CHAT.choices[0]!.message.tool_calls!.slice(0, 1) } }],
    };
    const back = convertMessagesResponseToChat(convertChatResponseToMessages(valid), { created: 1760000000 });
    expect(back.choices[0]!.message.content).toBe("Checking.");
    expect(back.choices[0]!.message.tool_calls).toEqual(valid.choices[0]!.message.tool_calls);
    expect(back.usage).toMatchObject({ prompt_tokens: 61, completion_tokens: 17, total_tokens: 78 });
  });
});
