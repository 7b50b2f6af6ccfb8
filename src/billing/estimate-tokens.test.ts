import { describe, expect, it } from "vitest";
import { estimateChatPromptTokens, estimateTextTokens, TOKENS_PER_IMAGE, TOKENS_PER_MESSAGE } from "./estimate-tokens.js";

describe("estimateTextTokens", () => {
  it("counts about 4 Latin characters per token, rounded up", () => {
    expect(estimateTextTokens("")).toBe(0);
    expect(estimateTextTokens("a")).toBe(1);
    expect(estimateTextTokens("abcd")).toBe(1);
    expect(estimateTextTokens("abcde")).toBe(2);
    expect(estimateTextTokens("Hello, world!")).toBe(4); // 13 chars
    expect(estimateTextTokens("x".repeat(4000))).toBe(1000);
  });

  it("treats accented Latin and typographic punctuation as Latin", () => {
    expect(estimateTextTokens("café")).toBe(1);
    expect(estimateTextTokens("“quoted” — Việt")).toBe(4); // 15 chars, all Latin-ish
  });

  it("counts CJK and other non-Latin characters as one token each", () => {
    expect(estimateTextTokens("你好世界")).toBe(4);
    expect(estimateTextTokens("こんにちは")).toBe(5);
    expect(estimateTextTokens("Привет")).toBe(6);
    expect(estimateTextTokens("hi 你好")).toBe(3); // 3 Latin (0.75) + 2
  });

  it("counts a surrogate pair as one character", () => {
    expect(estimateTextTokens("🎉")).toBe(1);
    expect(estimateTextTokens("🎉🎉abcd")).toBe(3);
    expect(estimateTextTokens("\uD83D")).toBe(1); // lone surrogate
  });

  it("is never 0 for non-empty text and is deterministic", () => {
    for (const text of [" ", "\n", "ä", "€", "\u0000"]) expect(estimateTextTokens(text)).toBeGreaterThan(0);
    const text = "Mixed 文本 with emoji 🎉 and code `x = 1`";
    expect(estimateTextTokens(text)).toBe(estimateTextTokens(text));
  });

  it("returns 0 for non-strings instead of throwing", () => {
    expect(estimateTextTokens(undefined as unknown as string)).toBe(0);
  });
});

describe("estimateChatPromptTokens", () => {
  it("adds a per-message overhead to the text", () => {
    const messages = [
      { role: "system", content: "You are terse." }, // 14 chars -> 4
      { role: "user", content: "Hi" }, // 1
    ];
    expect(estimateChatPromptTokens(messages)).toBe(2 * TOKENS_PER_MESSAGE + 4 + 1);
  });

  it("sums text parts and counts a fixed cost per image part", () => {
    const messages = [
      {
        role: "user",
        content: [
          { type: "text", text: "What is in this image?" }, // 22 chars -> 6
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
          { type: "image_url", image_url: { url: "https://example.com/cat.png", detail: "low" } },
          { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
        ],
      },
    ];
    expect(estimateChatPromptTokens(messages)).toBe(TOKENS_PER_MESSAGE + 6 + 2 * TOKENS_PER_IMAGE);
  });

  it("counts tool call names and arguments, names and tool results", () => {
    const messages = [
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
      }, // "get_weather" 11 -> 3, '{"city":"Oslo"}' 15 -> 4
      { role: "tool", tool_call_id: "call_1", content: "12C" }, // 1
      { role: "user", name: "ann", content: "ok" }, // 1 + 1
      { role: "assistant", function_call: { name: "f", arguments: "{}" } }, // 1 + 1
    ];
    expect(estimateChatPromptTokens(messages)).toBe(4 * TOKENS_PER_MESSAGE + 3 + 4 + 1 + 2 + 2);
  });

  it("ignores what is not a messages array or a message", () => {
    expect(estimateChatPromptTokens(undefined)).toBe(0);
    expect(estimateChatPromptTokens("hello")).toBe(0);
    expect(estimateChatPromptTokens({ content: "x" })).toBe(0);
    expect(estimateChatPromptTokens([null, 1, "x", []])).toBe(0);
    expect(estimateChatPromptTokens([{ role: "user" }])).toBe(TOKENS_PER_MESSAGE);
    expect(estimateChatPromptTokens([{ role: "user", content: [null, 3, { type: "text" }] }])).toBe(TOKENS_PER_MESSAGE);
  });
});
