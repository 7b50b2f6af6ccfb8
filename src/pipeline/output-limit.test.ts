import { describe, expect, it } from "vitest";
import type { ModelConfig } from "../core/catalog.js";
import { stopAtOutputLimit } from "./output-limit.js";
import { chatToAnthropic } from "../upstreams/anthropic/chat-plan.js";
import { chatToOpenAiChat } from "../upstreams/openai/chat-plan.js";
import { responsesPassThrough } from "../upstreams/openai/responses-plan.js";

const MODEL = { id: "gw-model", upstreamModel: "up-model", defaultOutputTokens: 100 } as ModelConfig;
const chunk = (content: string) => ({
  data: JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 7, model: "up-model", choices: [{ index: 0, delta: { content }, finish_reason: null }] }),
});

describe("stopAtOutputLimit", () => {
  it("Chat: relays until the delivered output reaches the limit, then nothing; end() is the length stop", () => {
    const limited = stopAtOutputLimit(chatToOpenAiChat({ stream: true }, MODEL).streamTranslator(), 3)!;
    expect(limited.push(chunk("abcd")).length).toBe(1); // 1 token
    expect(limited.reached()).toBe(false);
    expect(limited.push(chunk("abcdefgh")).length).toBe(1); // 3 tokens: reached
    expect(limited.reached()).toBe(true);
    expect(limited.push(chunk("more"))).toEqual([]);
    expect(limited.end()).toEqual([
      { data: { id: "c1", object: "chat.completion.chunk", created: 7, model: "gw-model", choices: [{ index: 0, delta: {}, finish_reason: "length" }] } },
      { data: "[DONE]", raw: true },
    ]);
  });

  it("an unreached limit ends as the upstream does", () => {
    const limited = stopAtOutputLimit(chatToOpenAiChat({ stream: true }, MODEL).streamTranslator(), 100)!;
    limited.push(chunk("abcd"));
    expect(limited.end()).toEqual([{ data: "[DONE]", raw: true }]);
  });

  it("Responses pass-through: response.incomplete with the latest response object", () => {
    const limited = stopAtOutputLimit(responsesPassThrough({ stream: true }, MODEL).streamTranslator(), 2)!;
    limited.push({ data: JSON.stringify({ type: "response.created", sequence_number: 0, response: { id: "resp_1", status: "in_progress", model: "up-model", output: [] } }) });
    limited.push({ data: JSON.stringify({ type: "response.output_text.delta", sequence_number: 4, delta: "abcdefgh" }) });
    expect(limited.reached()).toBe(true);
    expect(limited.end()).toEqual([
      {
        event: "response.incomplete",
        data: {
          type: "response.incomplete",
          sequence_number: 5,
          response: { id: "resp_1", status: "incomplete", model: "gw-model", output: [], incomplete_details: { reason: "max_output_tokens" } },
        },
      },
    ]);
  });

  it("null for a plan whose upstream honours limits (no length stop of its own)", () => {
    expect(stopAtOutputLimit(chatToAnthropic({ model: "gw-model", stream: true, messages: [{ role: "user", content: "Hi" }] }, MODEL).streamTranslator(), 3)).toBeNull();
  });
});
