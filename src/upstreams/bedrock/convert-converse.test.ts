// Golden translations: Chat request -> Converse, Converse response -> Chat, ConverseStream events -> Chat chunks.
import { describe, expect, it } from "vitest";
import { assembleChatStream } from "../../wire/chat/assemble-chat-stream.js";
import type { ChatCompletionChunk } from "../../wire/chat/types.js";
import { readFixture, toGolden } from "../../wire/shared/read-fixture.test-kit.js";
import { convertChatRequestToConverse, isAnthropicBedrockModel } from "./convert-chat-request-to-converse.js";
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

describe("reasoning on Bedrock", () => {
  const CLAUDE = { defaultMaxTokens: 1000, maxOutputTokens: 64000, upstreamModel: "us.anthropic.claude-sonnet-4-5-20250929-v1:0" };
  const user = { role: "user", content: "x" };

  it("sends reasoning_effort to a Claude model as thinking, with its signed history, and raises maxTokens by the budget (golden)", async () => {
    const { request, warnings } = convertChatRequestToConverse(readFixture(import.meta.url, "./__fixtures__/chat-request-reasoning.json"), CLAUDE);
    expect(request.additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 8192 } });
    expect(request.inferenceConfig).toEqual({ maxTokens: 1000 + 8192 });
    expect(request.messages[1]!.content.slice(0, 2)).toEqual([
      { reasoningContent: { reasoningText: { text: "The user wants Oslo's weather.", signature: "c2lnLW9zbG8=" } } },
      { reasoningContent: { redactedContent: "ZW5jcnlwdGVk" } },
    ]);
    expect(warnings).toContain("temperature: dropped, Anthropic takes none other than 1 with thinking");
    await expect(toGolden({ request, warnings })).toMatchFileSnapshot("./__fixtures__/chat-request-reasoning.converse.golden.json");
  });

  it.each([
    ["anthropic.claude-3-7-sonnet-20250219-v1:0", true],
    ["global.anthropic.claude-sonnet-4-5-20250929-v1:0", true],
    ["arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-opus-4-1-20250805-v1:0", true],
    ["amazon.nova-pro-v1:0", false],
    ["meta.llama3-70b-instruct-v1:0", false],
    ["my-anthropic.model", false],
  ])("tells a Claude model by its id: %s -> %s", (id, claude) => {
    expect(isAnthropicBedrockModel(id)).toBe(claude);
  });

  it("drops reasoning_effort and thinking history with a warning for other models", () => {
    const body = readFixture<Record<string, unknown>>(import.meta.url, "./__fixtures__/chat-request-reasoning.json");
    const { request, warnings } = convertChatRequestToConverse(body, { ...CLAUDE, upstreamModel: "amazon.nova-pro-v1:0" });
    expect(request.additionalModelRequestFields).toBeUndefined();
    expect(request.inferenceConfig).toEqual({ maxTokens: 1000, temperature: 0.2 });
    expect(JSON.stringify(request.messages)).not.toContain("reasoningContent");
    expect(warnings).toContain("reasoning_effort: dropped (thinking is sent to Claude models on Bedrock only)");
  });

  it("keeps thinking off where Claude refuses it: a forced tool, a small limit; refuses an unknown effort", () => {
    const tools = [{ type: "function", function: { name: "f" } }];
    const forced = convertChatRequestToConverse({ model: "m", messages: [user], tools, tool_choice: "required", reasoning_effort: "high" }, CLAUDE);
    expect(forced.request.additionalModelRequestFields).toBeUndefined();
    expect(forced.warnings).toContain("reasoning_effort: not sent, Anthropic takes no thinking with a forced tool choice");
    const small = convertChatRequestToConverse({ model: "m", messages: [user], max_tokens: 1500, reasoning_effort: "high" }, CLAUDE);
    expect(small.request.additionalModelRequestFields).toBeUndefined();
    expect(small.request.inferenceConfig).toEqual({ maxTokens: 1500 });
    const kept = convertChatRequestToConverse({ model: "m", messages: [user], max_tokens: 10000, reasoning_effort: "high" }, CLAUDE);
    expect(kept.request.additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 5000 } });
    expect(kept.request.inferenceConfig).toEqual({ maxTokens: 10000 });
    expect(() => convertChatRequestToConverse({ model: "m", messages: [user], reasoning_effort: "huge" }, CLAUDE)).toThrow("reasoning_effort must be one of");
  });

  it("reads reasoningContent as reasoning_content and signed or redacted thinking_blocks (golden)", async () => {
    const completion = convertConverseResponseToChat(readFixture<ConverseResponse>(import.meta.url, "./__fixtures__/converse-response-reasoning.json"), FIXED);
    const message = completion.choices[0]!.message;
    expect(message.content).toBe("Checking Oslo.");
    expect(message.reasoning_content).toBe("Oslo first, then Rome.");
    expect(message.thinking_blocks).toEqual([
      { type: "thinking", thinking: "Oslo first, then Rome.", signature: "c2lnLW9uZQ==" },
      { type: "redacted_thinking", data: "ZW5jcnlwdGVk" },
    ]);
    expect(completion.usage!.completion_tokens_details?.reasoning_tokens).toBeGreaterThan(0);
    expect(completion.usage!.completion_tokens_details?.reasoning_tokens).toBeLessThanOrEqual(90);
    await expect(toGolden(completion)).toMatchFileSnapshot("./__fixtures__/converse-response-reasoning.chat.golden.json");
  });

  it("streams reasoning as delta.reasoning_content and each finished block as thinking_blocks, assembling to the buffered answer (golden)", async () => {
    const machine = new ConverseEventsToChatStream(FIXED);
    const events = readFixture<ConverseStreamEvent[]>(import.meta.url, "./__fixtures__/converse-events-reasoning.json");
    const chunks = [...events.flatMap((event) => machine.push(event)), ...machine.finish()] as ChatCompletionChunk[];
    const streamed = assembleChatStream(chunks).choices[0]!.message;
    const buffered = convertConverseResponseToChat(readFixture<ConverseResponse>(import.meta.url, "./__fixtures__/converse-response-reasoning.json"), FIXED).choices[0]!.message;
    expect(streamed.reasoning_content).toBe(buffered.reasoning_content);
    expect(streamed.thinking_blocks).toEqual(buffered.thinking_blocks);
    expect(streamed.content).toBe(buffered.content);
    expect(chunks.at(-1)!.usage).toEqual(
      convertConverseResponseToChat(readFixture<ConverseResponse>(import.meta.url, "./__fixtures__/converse-response-reasoning.json"), FIXED).usage,
    );
    await expect(toGolden(chunks)).toMatchFileSnapshot("./__fixtures__/converse-events-reasoning.chat-chunks.golden.json");
  });
});
