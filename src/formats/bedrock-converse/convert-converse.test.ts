// Golden translations: Chat request -> Converse, Converse response -> Chat, ConverseStream events -> Chat chunks.
import { describe, expect, it } from "vitest";
import { assembleChatStream } from "../openai-chat/assemble-chat-stream.js";
import type { ChatCompletionChunk } from "../openai-chat/types.js";
import { readFixture, toGolden } from "../shared/read-fixture.test-kit.js";
import { convertChatRequestToConverse } from "./convert-chat-request-to-converse.js";
import { convertConverseResponseToChat } from "./convert-converse-response-to-chat.js";
import { mapConverseStopReason } from "./convert-usage.js";
import { ConverseEventsToChatStream } from "./converse-events-to-chat-stream.js";
import type { ConverseResponse, ConverseStreamEvent } from "./types.js";

const FIXED = { model: "claude-bedrock", id: "chatcmpl-fixed", created: 1760000000 };

describe("Chat request -> Converse", () => {
  it("translates system, images, tool calls and results, tools, tool_choice and inference settings (golden)", async () => {
    const { request, warnings } = convertChatRequestToConverse(readFixture(import.meta.url, "./__fixtures__/chat-request.json"), { defaultMaxTokens: 1000 });
    await expect(toGolden({ request, warnings })).toMatchFileSnapshot("./__fixtures__/chat-request.converse.golden.json");
  });

  it.each([
    ["auto", { auto: {} }],
    ["required", { any: {} }],
    ["none", { auto: {} }],
  ])("maps tool_choice %s", (choice, expected) => {
    const { request } = convertChatRequestToConverse(
      { model: "m", messages: [{ role: "user", content: "x" }], tools: [{ type: "function", function: { name: "f" } }], tool_choice: choice },
      { defaultMaxTokens: 10 },
    );
    expect(request.toolConfig?.toolChoice).toEqual(expected);
  });

  it("refuses images given by URL (Converse takes bytes) and image types it does not know", () => {
    const withImage = (url: string) => ({ model: "m", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url } }] }] });
    expect(() => convertChatRequestToConverse(withImage("https://example.com/cat.png"), { defaultMaxTokens: 10 })).toThrow("base64 data URLs");
    expect(() => convertChatRequestToConverse(withImage("data:image/tiff;base64,AAAA"), { defaultMaxTokens: 10 })).toThrow("PNG, JPEG, GIF or WebP");
  });
});

describe("Converse response -> Chat", () => {
  it("joins text, turns toolUse into tool_calls, maps stop reason and usage (golden)", async () => {
    const completion = convertConverseResponseToChat(readFixture<ConverseResponse>(import.meta.url, "./__fixtures__/converse-response.json"), FIXED);
    expect(completion.usage).toEqual({
      prompt_tokens: 412 + 2048 + 100,
      completion_tokens: 57,
      total_tokens: 2617,
      prompt_tokens_details: { cached_tokens: 2048, cache_write_tokens: 100 },
    });
    await expect(toGolden(completion)).toMatchFileSnapshot("./__fixtures__/converse-response.chat.golden.json");
  });

  it.each([
    ["end_turn", "stop"],
    ["stop_sequence", "stop"],
    ["tool_use", "tool_calls"],
    ["max_tokens", "length"],
    ["content_filtered", "content_filter"],
    ["guardrail_intervened", "content_filter"],
  ])("maps stopReason %s to %s", (stopReason, finishReason) => {
    expect(mapConverseStopReason(stopReason)).toBe(finishReason);
  });
});

describe("ConverseStream events -> Chat chunks", () => {
  const events = readFixture<ConverseStreamEvent[]>(import.meta.url, "./__fixtures__/converse-events.json");
  const replay = () => {
    const machine = new ConverseEventsToChatStream(FIXED);
    return [...events.flatMap((event) => machine.push(event)), ...machine.finish()] as ChatCompletionChunk[];
  };

  it("replays the events to the golden chunks: finish chunk, then the usage chunk last", async () => {
    const chunks = replay();
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe("tool_calls");
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 2560, completion_tokens: 57 });
    await expect(toGolden(chunks)).toMatchFileSnapshot("./__fixtures__/converse-events.chat-chunks.golden.json");
  });

  it("assembles to the text and tool inputs the events carry", () => {
    const message = assembleChatStream(replay()).choices[0]!.message;
    expect(message.content).toBe("Checking both.");
    expect(message.tool_calls?.map((call) => [call.id, call.function.name, JSON.parse(call.function.arguments) as unknown])).toEqual([
      ["tooluse_a1", "get_weather", { city: "Oslo" }],
      ["tooluse_b2", "get_weather", { city: "Rome" }],
    ]);
  });
});
