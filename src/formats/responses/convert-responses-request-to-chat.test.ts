import { describe, expect, it } from "vitest";
import { GatewayError } from "../../errors/catalogue.js";
import type { ChatMessage } from "../../wire/chat/types.js";
import { convertResponsesRequestToChat } from "./convert-responses-request-to-chat.js";

/** Shaped like a Codex CLI request: instructions, namespace + web_search tools, reasoning, store, include. */
const CODEX_REQUEST = {
  model: "gpt-5-codex",
  instructions: "You are Codex.",
  input: [
    { type: "message", role: "developer", content: [{ type: "input_text", text: "Sandbox: workspace-write." }] },
    {
      type: "message",
      role: "user",
      content: [
        { type: "input_text", text: "List files" },
        { type: "input_image", image_url: "data:image/png;base64,AA", detail: "original" },
      ],
    },
    { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "xyz" },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "Running ls.", annotations: [] }] },
    { type: "function_call", call_id: "call_1", name: "shell", arguments: '{"command":["ls"]}' },
    { type: "function_call", call_id: "call_2", name: "lookup", namespace: "crm", arguments: "" },
    { type: "function_call_output", call_id: "call_1", output: "a.ts\nb.ts" },
    { type: "function_call_output", call_id: "call_2", output: [{ type: "input_text", text: "found" }] },
    { type: "web_search_call", id: "ws_1", status: "completed" },
    { type: "custom_tool_call_output", call_id: "call_x", output: "orphan" },
  ],
  tools: [
    { type: "function", name: "shell", description: "Run a command", parameters: { type: "object", properties: { command: { type: "array" } } }, strict: false },
    { type: "namespace", name: "crm", description: "CRM tools", tools: [{ type: "function", name: "lookup", parameters: { type: "object" } }] },
    { type: "web_search" },
  ],
  tool_choice: "auto",
  parallel_tool_calls: false,
  reasoning: { effort: "high", summary: "auto" },
  store: false,
  include: ["reasoning.encrypted_content"],
  stream: true,
  prompt_cache_key: "abc",
  max_output_tokens: 2000,
  text: { format: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true } },
  previous_response_id: null,
};

describe("convertResponsesRequestToChat", () => {
  it("translates a Codex CLI request", () => {
    const { request, warnings, conversation, toolNamespaces } = convertResponsesRequestToChat(CODEX_REQUEST);
    const expectedConversation: ChatMessage[] = [
      { role: "system", content: "Sandbox: workspace-write." },
      {
        role: "user",
        content: [
          { type: "text", text: "List files" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AA" } },
        ],
      },
      {
        role: "assistant",
        content: "Running ls.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "shell", arguments: '{"command":["ls"]}' } },
          { id: "call_2", type: "function", function: { name: "crm__lookup", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "a.ts\nb.ts" },
      { role: "tool", tool_call_id: "call_2", content: "found" },
    ];
    expect(request).toEqual({
      model: "gpt-5-codex",
      messages: [{ role: "system", content: "You are Codex." }, ...expectedConversation],
      tools: [
        { type: "function", function: { name: "shell", description: "Run a command", parameters: { type: "object", properties: { command: { type: "array" } } }, strict: false } },
        { type: "function", function: { name: "crm__lookup", parameters: { type: "object" } } },
      ],
      tool_choice: "auto",
      parallel_tool_calls: false,
      max_tokens: 2000,
      response_format: { type: "json_schema", json_schema: { name: "out", schema: { type: "object" }, strict: true } },
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(conversation).toEqual(expectedConversation);
    expect(toolNamespaces).toEqual({ crm__lookup: { namespace: "crm", name: "lookup" } });
    for (const fragment of ["web_search", "reasoning items", "reasoning.effort", "prompt_cache_key", "custom_tool_call_output"]) {
      expect(warnings.some((w) => w.includes(fragment))).toBe(true);
    }
    expect(warnings.some((w) => w.startsWith("store") || w.startsWith("include"))).toBe(false);
  });

  it("accepts a string input, history, reasoning effort when allowed, and max_completion_tokens", () => {
    const history: ChatMessage[] = [
      { role: "user", content: "Earlier" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_h", type: "function", function: { name: "f", arguments: "{}" } }] },
    ];
    const { request } = convertResponsesRequestToChat(
      {
        model: "o4-mini",
        input: [
          { type: "function_call_output", call_id: "call_h", output: "done" },
          { role: "user", content: "Next" },
        ],
        reasoning: { effort: "low" },
        max_output_tokens: 100,
        text: { format: { type: "json_object" } },
        metadata: { k: "v" },
        user: "u1",
        temperature: 0.2,
      },
      { history, upstreamAcceptsReasoningEffort: true, tokenLimitField: "max_completion_tokens" },
    );
    expect(request.messages).toEqual([...history, { role: "tool", tool_call_id: "call_h", content: "done" }, { role: "user", content: "Next" }]);
    expect(request).toMatchObject({
      reasoning_effort: "low",
      max_completion_tokens: 100,
      response_format: { type: "json_object" },
      metadata: { k: "v" },
      user: "u1",
      temperature: 0.2,
    });
    expect(convertResponsesRequestToChat({ model: "m", input: "hello" }).request.messages).toEqual([{ role: "user", content: "hello" }]);
  });

  it("maps function and allowed_tools choices to the nested Chat shape", () => {
    const tools = [{ type: "function", name: "f", parameters: null }];
    expect(convertResponsesRequestToChat({ model: "m", input: "x", tools, tool_choice: { type: "function", name: "f" } }).request.tool_choice).toEqual({
      type: "function",
      function: { name: "f" },
    });
    expect(
      convertResponsesRequestToChat({ model: "m", input: "x", tools, tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "f" }] } }).request
        .tool_choice,
    ).toEqual({ type: "allowed_tools", allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "f" } }] } });
    // Only built-in tools: nothing is sent, not even an empty list.
    const builtinOnly = convertResponsesRequestToChat({ model: "m", input: "x", tools: [{ type: "web_search" }], tool_choice: "required" }).request;
    expect(builtinOnly).not.toHaveProperty("tools");
    expect(builtinOnly).not.toHaveProperty("tool_choice");
  });

  it("rejects invalid input naming the field", () => {
    const paramOf = (body: unknown): string | undefined => {
      try {
        convertResponsesRequestToChat(body);
      } catch (error) {
        if (error instanceof GatewayError) return error.details.param;
      }
      return undefined;
    };
    expect(paramOf({ model: "m", input: [{ role: "user", content: [{ type: "input_image", file_id: "file_1" }] }] })).toBe("input[0].content[0].image_url");
    expect(paramOf({ model: "m", input: [{ type: "item_reference", id: "msg_1" }] })).toBe("input[0].type");
    expect(paramOf({ model: "m", input: [{ role: "robot", content: "x" }] })).toBe("input[0].role");
    expect(paramOf({ input: "x" })).toBe("model");
  });
});
