import { describe, expect, it } from "vitest";
import { GatewayError } from "../../errors/catalogue.js";
import { convertChatRequestToMessages } from "./convert-chat-request-to-messages.js";

describe("convertChatRequestToMessages", () => {
  it("translates system, tool calls, tool results (merged, results first) and images", () => {
    const { request, warnings } = convertChatRequestToMessages(
      {
        model: "claude-sonnet-4-5",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "developer", content: [{ type: "text", text: "Use tools." }] },
          {
            role: "user",
            content: [
              { type: "text", text: "Weather in Oslo and Bergen? Here is a map:" },
              { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/AA" } },
              { type: "image_url", image_url: { url: "https://x.test/map.png", detail: "high" } },
            ],
          },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
              { id: "call_2", type: "function", function: { name: "get_weather", arguments: '{"city":"Bergen"}' } },
            ],
          },
          { role: "tool", tool_call_id: "call_1", content: "12C" },
          { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "9C" }] },
          { role: "user", content: "Thanks" },
        ],
        tools: [{ type: "function", function: { name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }],
        tool_choice: "required",
        parallel_tool_calls: false,
        max_completion_tokens: 500,
        stop: "END",
        temperature: 1.5,
        top_p: 0.9,
        user: "u1",
        stream: true,
        stream_options: { include_usage: true },
        seed: 7,
      },
      { defaultMaxTokens: 4096, cacheBreakpoints: "off" },
    );
    expect(request).toEqual({
      model: "claude-sonnet-4-5",
      max_tokens: 500,
      system: "Be brief.\n\nUse tools.",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Weather in Oslo and Bergen? Here is a map:" },
            { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "/9j/AA" } },
            { type: "image", source: { type: "url", url: "https://x.test/map.png" } },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Oslo" } },
            { type: "tool_use", id: "call_2", name: "get_weather", input: { city: "Bergen" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_1", content: "12C" },
            { type: "tool_result", tool_use_id: "call_2", content: "9C" },
            { type: "text", text: "Thanks" },
          ],
        },
      ],
      tools: [{ name: "get_weather", description: "Weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
      stop_sequences: ["END"],
      temperature: 1,
      top_p: 0.9,
      metadata: { user_id: "u1" },
      stream: true,
    });
    expect(warnings.some((w) => w.startsWith("seed"))).toBe(true);
    expect(warnings.some((w) => w.startsWith("temperature"))).toBe(true);
  });

  it("uses the default max_tokens, maps named and none tool_choice", () => {
    const tools = [{ type: "function", function: { name: "f" } }];
    const named = convertChatRequestToMessages(
      { model: "m", messages: [{ role: "user", content: "hi" }], tools, tool_choice: { type: "function", function: { name: "f" } } },
      { defaultMaxTokens: 4096, cacheBreakpoints: "off" },
    ).request;
    expect(named.max_tokens).toBe(4096);
    expect(named.tool_choice).toEqual({ type: "tool", name: "f" });
    expect(named.tools).toEqual([{ name: "f", input_schema: { type: "object", properties: {} } }]);
    const none = convertChatRequestToMessages({ model: "m", messages: [{ role: "user", content: "hi" }], tools, tool_choice: "none" }, { defaultMaxTokens: 1 }).request;
    expect(none.tool_choice).toEqual({ type: "none" });
  });

  it("rejects n > 1 naming n, and bad image URLs naming the part", () => {
    const paramOf = (body: unknown): string | undefined => {
      try {
        convertChatRequestToMessages(body, { defaultMaxTokens: 1 });
      } catch (error) {
        if (error instanceof GatewayError) return error.details.param;
      }
      return undefined;
    };
    expect(paramOf({ model: "m", n: 2, messages: [] })).toBe("n");
    expect(paramOf({ model: "m", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "ftp://x" } }] }] })).toBe("messages[0].content[0].image_url.url");
  });
});
