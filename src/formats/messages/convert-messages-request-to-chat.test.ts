import { describe, expect, it } from "vitest";
import { GatewayError } from "../../errors/catalogue.js";
import { convertMessagesRequestToChat } from "./convert-messages-request-to-chat.js";

/** Shaped like a Claude Code request: cache_control everywhere, thinking, context_management, tools: []. */
const CLAUDE_CODE_REQUEST = {
  model: "claude-sonnet-4-5",
  max_tokens: 32000,
  stream: true,
  system: [
    { type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } },
    { type: "text", text: "Be concise." },
  ],
  messages: [
    { role: "user", content: [{ type: "text", text: "What is the weather in Oslo?", cache_control: { type: "ephemeral" } }] },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Need the tool.", signature: "sig" },
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } },
        { type: "tool_use", id: "toolu_2", name: "get_time", input: {} },
      ],
    },
    {
      role: "user",
      content: [
        { type: "text", text: "Also, thanks!" },
        { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "12C, cloudy" }] },
        { type: "tool_result", tool_use_id: "toolu_2", content: "boom", is_error: true },
      ],
    },
    { role: "system", content: "Reminder: stay on topic." },
    {
      role: "user",
      content: [
        { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBOR" } },
        { type: "image", source: { type: "url", url: "https://x.test/a.png" } },
      ],
    },
  ],
  tools: [],
  tool_choice: { type: "auto" },
  thinking: { type: "enabled", budget_tokens: 4000 },
  context_management: { edits: [] },
  output_config: { effort: "high" },
  metadata: { user_id: "user_abc" },
  stop_sequences: ["\n\nHuman:"],
  temperature: 1,
};

describe("convertMessagesRequestToChat", () => {
  it("translates a Claude Code request", () => {
    const { request, warnings } = convertMessagesRequestToChat(CLAUDE_CODE_REQUEST);
    expect(request).toEqual({
      model: "claude-sonnet-4-5",
      max_tokens: 32000,
      stream: true,
      stream_options: { include_usage: true },
      temperature: 1,
      stop: ["\n\nHuman:"],
      user: "user_abc",
      messages: [
        { role: "system", content: "You are Claude Code.\nBe concise." },
        { role: "user", content: "What is the weather in Oslo?" },
        {
          role: "assistant",
          content: "Checking.",
          tool_calls: [
            { id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
            { id: "toolu_2", type: "function", function: { name: "get_time", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "toolu_1", content: "12C, cloudy" },
        { role: "tool", tool_call_id: "toolu_2", content: "Error: boom" },
        { role: "user", content: "Also, thanks!" },
        { role: "system", content: "Reminder: stay on topic." },
        {
          role: "user",
          content: [
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBOR" } },
            { type: "image_url", image_url: { url: "https://x.test/a.png" } },
          ],
        },
      ],
    });
    expect(request).not.toHaveProperty("tools");
    expect(request).not.toHaveProperty("tool_choice");
    for (const dropped of ["thinking", "context_management", "output_config", "cache_control", "tool_choice"]) {
      expect(warnings.some((w) => w.startsWith(dropped))).toBe(true);
    }
  });

  it("maps custom tools and every tool_choice, dropping server tools", () => {
    const base = {
      model: "m",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
      tools: [
        { name: "get_weather", description: "Weather", input_schema: { type: "object", properties: { city: { type: "string" } } } },
        { type: "web_search_20250305", name: "web_search" },
      ],
    };
    const auto = convertMessagesRequestToChat({ ...base, tool_choice: { type: "auto", disable_parallel_tool_use: true } });
    expect(auto.request.tools).toEqual([
      { type: "function", function: { name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } } } } },
    ]);
    expect(auto.request.tool_choice).toBe("auto");
    expect(auto.request.parallel_tool_calls).toBe(false);
    expect(auto.warnings.some((w) => w.includes("web_search_20250305"))).toBe(true);
    expect(convertMessagesRequestToChat({ ...base, tool_choice: { type: "any" } }).request.tool_choice).toBe("required");
    expect(convertMessagesRequestToChat({ ...base, tool_choice: { type: "none" } }).request.tool_choice).toBe("none");
    expect(convertMessagesRequestToChat({ ...base, tool_choice: { type: "tool", name: "get_weather" } }).request.tool_choice).toEqual({
      type: "function",
      function: { name: "get_weather" },
    });
  });

  it("can target max_completion_tokens and the developer role", () => {
    const { request } = convertMessagesRequestToChat(
      { model: "m", max_tokens: 5, system: "sys", messages: [{ role: "user", content: "hi" }] },
      { tokenLimitField: "max_completion_tokens", systemRole: "developer" },
    );
    expect(request.max_completion_tokens).toBe(5);
    expect(request.max_tokens).toBeUndefined();
    expect(request.messages[0]).toEqual({ role: "developer", content: "sys" });
  });

  it("rejects invalid input naming the field", () => {
    const bad = (body: unknown): GatewayError => {
      try {
        convertMessagesRequestToChat(body);
      } catch (error) {
        if (error instanceof GatewayError) return error;
      }
      throw new Error("expected a GatewayError");
    };
    expect(bad({ model: "m", max_tokens: 1, messages: [{ role: "user", content: [{ type: "video" }] }] }).details.param).toBe("messages[0].content[0].type");
    expect(bad({ model: "m", max_tokens: 1, messages: [{ role: "robot", content: "x" }] }).details.param).toBe("messages[0].role");
    expect(bad({ model: "m", max_tokens: 1, messages: "nope" }).details.param).toBe("messages");
    expect(bad({ model: "m", max_tokens: 1, messages: [], tool_choice: { type: "x" }, tools: [{ name: "t" }] }).details.param).toBe("tool_choice.type");
    expect(bad({ model: "m", max_tokens: 1, messages: [{ role: "user", content: [{ type: "image", source: { type: "file", file_id: "f" } }] }] }).type).toBe("invalid_request");
  });

  it("moves tool_result images into a user message after the tool messages", () => {
    const { request } = convertMessagesRequestToChat({
      model: "m",
      max_tokens: 1,
      messages: [
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "screenshot", input: {} }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "t1",
              content: [
                { type: "text", text: "ok" },
                { type: "image", source: { type: "base64", media_type: "image/png", data: "AA" } },
              ],
            },
          ],
        },
      ],
    });
    expect(request.messages.slice(1)).toEqual([
      { role: "tool", tool_call_id: "t1", content: "ok" },
      { role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AA" } }] },
    ]);
  });
});
