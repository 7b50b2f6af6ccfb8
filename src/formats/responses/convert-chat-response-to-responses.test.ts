import { describe, expect, it } from "vitest";
import type { ChatCompletion } from "../../wire/chat/types.js";
import { convertChatMessagesForHistory, convertChatResponseToAssistantMessage } from "./convert-chat-messages-for-history.js";
import { convertChatResponseToResponses } from "./convert-chat-response-to-responses.js";

const CHAT: ChatCompletion = {
  id: "chatcmpl-9x",
  object: "chat.completion",
  created: 1760000000,
  model: "gpt-4o-2024-08-06",
  choices: [
    {
      index: 0,
      finish_reason: "tool_calls",
      message: {
        role: "assistant",
        content: "Checking.",
        refusal: null,
        tool_calls: [{ id: "call_a1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
      },
    },
  ],
  usage: { prompt_tokens: 80, completion_tokens: 40, total_tokens: 120, prompt_tokens_details: { cached_tokens: 16 }, completion_tokens_details: { reasoning_tokens: 22 } },
};

describe("convertChatResponseToResponses", () => {
  it("builds the Responses object with message and function_call items and usage", () => {
    const response = convertChatResponseToResponses(CHAT, {
      id: "resp_1",
      clock: () => 1760000005,
      model: "gpt-alias",
      request: { model: "gpt-alias", instructions: "Be brief.", temperature: 0.5, tools: [{ type: "function", name: "get_weather" }] },
    });
    expect(response).toMatchObject({
      id: "resp_1",
      object: "response",
      created_at: 1760000000,
      completed_at: 1760000005,
      status: "completed",
      model: "gpt-alias",
      error: null,
      incomplete_details: null,
      instructions: "Be brief.",
      temperature: 0.5,
      tools: [{ type: "function", name: "get_weather" }],
      output: [
        { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Checking.", annotations: [] }] },
        { type: "function_call", id: "fc_1_0", call_id: "call_a1", name: "get_weather", arguments: '{"city":"Oslo"}', status: "completed" },
      ],
      usage: { input_tokens: 80, input_tokens_details: { cached_tokens: 16 }, output_tokens: 40, output_tokens_details: { reasoning_tokens: 22 }, total_tokens: 120 },
    });
    // output_text is computed by the SDK, not sent on the wire.
    expect(response).not.toHaveProperty("output_text");
  });

  it("marks a length stop incomplete with reason max_output_tokens", () => {
    const chat: ChatCompletion = { ...CHAT, choices: [{ index: 0, finish_reason: "length", message: { role: "assistant", content: "Once upon" } }] };
    expect(convertChatResponseToResponses(chat)).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
  });

  it("restores namespaces of flattened tool names", () => {
    const chat: ChatCompletion = {
      ...CHAT,
      choices: [
        {
          index: 0,
          finish_reason: "tool_calls",
          message: { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "crm__lookup", arguments: "{}" } }] },
        },
      ],
    };
    expect(convertChatResponseToResponses(chat, { toolNamespaces: { crm__lookup: { namespace: "crm", name: "lookup" } } }).output).toEqual([
      expect.objectContaining({ type: "function_call", name: "lookup", namespace: "crm" }),
    ]);
  });
});

describe("convertChatMessagesForHistory", () => {
  it("appends the assistant turn to the conversation, skipping an empty one", () => {
    const conversation = [{ role: "user" as const, content: "hi" }];
    const assistant = convertChatResponseToAssistantMessage(CHAT);
    expect(convertChatMessagesForHistory(conversation, assistant)).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "Checking.", tool_calls: CHAT.choices[0]!.message.tool_calls },
    ]);
    expect(convertChatMessagesForHistory(conversation, { role: "assistant", content: "" })).toEqual(conversation);
  });
});
