// Each upstream's usage object -> the gateway's Usage, for the dimensions that need reading: cache
// writes by lifetime and web searches (Anthropic native and bridged over Chat, Bedrock, Responses).
import { describe, expect, it } from "vitest";
import { convertAnthropicUsageToChat } from "../wire/messages/index.js";
import { convertConverseUsageToChat } from "./bedrock/translators.js";
import { plausibleUsage } from "../core/usage.js";
import { usageFromAnthropic } from "./anthropic/messages-plan.js";
import { usageFromResponses } from "./openai/responses-plan.js";
import { splitCacheWrites, usageFromChat } from "./usage-readers.js";

describe("usage readers", () => {
  it("Anthropic: input includes cache reads and writes; the split by lifetime; web searches", () => {
    const usage = usageFromAnthropic({
      input_tokens: 50,
      cache_read_input_tokens: 10_000,
      cache_creation_input_tokens: 3_000,
      cache_creation: { ephemeral_5m_input_tokens: 1_000, ephemeral_1h_input_tokens: 2_000 },
      output_tokens: 400,
      server_tool_use: { web_search_requests: 2 },
    });
    expect(usage).toMatchObject({ inputTokens: 13_050, cachedInputTokens: 10_000, cacheWrite5mTokens: 1_000, cacheWrite1hTokens: 2_000, outputTokens: 400, webSearchCalls: 2 });
    // Only the total: all 5-minute writes.
    expect(usageFromAnthropic({ input_tokens: 1, cache_creation_input_tokens: 700, output_tokens: 1 })).toMatchObject({
      inputTokens: 701,
      cacheWrite5mTokens: 700,
      cacheWrite1hTokens: 0,
      webSearchCalls: 0,
    });
  });

  it("splitCacheWrites: the 1-hour part stays within the total; a split without a total makes it", () => {
    expect(splitCacheWrites(100, 0, 500)).toEqual({ write5m: 0, write1h: 100 });
    expect(splitCacheWrites(undefined, 30, 20)).toEqual({ write5m: 30, write1h: 20 });
    // A hostile count stays what it is, and the whole report is refused (billed as an estimate).
    expect(plausibleUsage(usageFromAnthropic({ input_tokens: 1, cache_creation_input_tokens: -5, output_tokens: 1 }))).toBeNull();
    expect(plausibleUsage(usageFromAnthropic({ input_tokens: 1, cache_creation_input_tokens: Number.POSITIVE_INFINITY, output_tokens: 1 }))).toBeNull();
    expect(plausibleUsage(usageFromAnthropic({ input_tokens: 1, server_tool_use: { web_search_requests: -1 }, output_tokens: 1 }))).toBeNull();
  });

  it("Anthropic bridged over Chat: 1-hour writes and searches survive the interchange, and never reach the wire", () => {
    const chat = convertAnthropicUsageToChat({
      input_tokens: 200,
      cache_creation_input_tokens: 5_000,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 5_000 },
      output_tokens: 100,
      server_tool_use: { web_search_requests: 3 },
    });
    expect(usageFromChat({ ...chat })).toMatchObject({ inputTokens: 5_200, cacheWrite5mTokens: 0, cacheWrite1hTokens: 5_000, webSearchCalls: 3 });
    const wire = JSON.stringify(chat);
    expect(wire).not.toMatch(/1h|webSearch|cacheWrite1h/i);
    expect(JSON.parse(wire)).toEqual({ prompt_tokens: 5_200, completion_tokens: 100, total_tokens: 5_300, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 5_000 } });
  });

  it("Bedrock: cacheWriteInputTokens are 5-minute writes except the cacheDetails 1h part", () => {
    const chat = convertConverseUsageToChat({
      inputTokens: 10,
      cacheReadInputTokens: 100,
      cacheWriteInputTokens: 300,
      cacheDetails: [
        { ttl: "1h", inputTokens: 120 },
        { ttl: "5m", inputTokens: 180 },
      ],
      outputTokens: 5,
    });
    expect(usageFromChat(chat)).toMatchObject({ inputTokens: 410, cachedInputTokens: 100, cacheWrite5mTokens: 180, cacheWrite1hTokens: 120 });
  });

  it("Responses: web searches are the output items of type web_search_call", () => {
    const output = [{ type: "web_search_call" }, { type: "message" }, { type: "web_search_call" }, null];
    expect(usageFromResponses({ input_tokens: 10, output_tokens: 5 }, output)).toMatchObject({ webSearchCalls: 2 });
    expect(usageFromResponses({ input_tokens: 10, output_tokens: 5 })).toMatchObject({ webSearchCalls: 0 });
  });
});
