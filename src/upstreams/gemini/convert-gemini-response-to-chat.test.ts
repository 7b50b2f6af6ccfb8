import { describe, expect, it } from "vitest";
import { readFixture, toGolden } from "../../wire/shared/read-fixture.test-kit.js";
import { convertGeminiResponseToChat, mapFinishReason } from "./convert-gemini-response-to-chat.js";
import type { GeminiResponse } from "../../wire/gemini/types.js";

const options = { id: "chatcmpl-fixed", created: 1760000000, model: "gemini-via-gateway", callIdSeed: "golden" };

describe("convertGeminiResponseToChat", () => {
  const response = readFixture<GeminiResponse>(import.meta.url, "./__fixtures__/response-text-and-tools.json");

  it("translates text and function calls to the golden Chat completion", async () => {
    await expect(toGolden(convertGeminiResponseToChat(response, options))).toMatchFileSnapshot("./__fixtures__/response-text-and-tools.chat.golden.json");
  });

  it("sends thought parts as reasoning_content, not content; arguments as JSON text; each call its own id", () => {
    const message = convertGeminiResponseToChat(response, options).choices[0]!.message;
    expect(message.content).toBe("Checking both cities.");
    expect(message.reasoning_content).toBe("Considering which tools to call.");
    expect(message.tool_calls!.map((c) => [c.function.name, JSON.parse(c.function.arguments) as unknown])).toEqual([
      ["get_weather", { city: "Oslo" }],
      ["get_weather", { city: "Rome" }],
    ]);
    const ids = message.tool_calls!.map((c) => c.id);
    expect(new Set(ids).size).toBe(2);
    expect(ids.every((id) => /^call_[0-9a-f]{24}$/.test(id))).toBe(true);
  });

  it("never shows the upstream responseId", () => {
    expect(JSON.stringify(convertGeminiResponseToChat(response, { model: "m" }))).not.toContain("resp-upstream-0001");
  });

  it("reports cached content and thoughts in the usage: thoughts billed as output", () => {
    expect(convertGeminiResponseToChat(response, options).usage).toEqual({
      prompt_tokens: 1200,
      completion_tokens: 340,
      total_tokens: 1540,
      prompt_tokens_details: { cached_tokens: 1000 },
      completion_tokens_details: { reasoning_tokens: 300 },
    });
  });

  it.each([
    ["STOP", false, "stop"],
    ["STOP", true, "tool_calls"],
    ["MAX_TOKENS", false, "length"],
    ["SAFETY", false, "content_filter"],
    ["RECITATION", false, "content_filter"],
    ["PROHIBITED_CONTENT", false, "content_filter"],
    ["MALFORMED_FUNCTION_CALL", false, "stop"],
    [undefined, false, "stop"],
  ] as const)("maps finishReason %s (calls: %s) to %s", (reason, calls, expected) => {
    expect(mapFinishReason(reason, calls)).toBe(expected);
  });

  it("a blocked prompt (no candidates) ends with content_filter and empty content", () => {
    const completion = convertGeminiResponseToChat({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } }, options);
    expect(completion.choices[0]).toMatchObject({ message: { content: "" }, finish_reason: "content_filter" });
    expect(completion.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 0 });
  });
});
