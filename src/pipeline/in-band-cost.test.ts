import { describe, expect, it } from "vitest";
import type { ModelConfig } from "../config/load.js";
import { CostInBandStream, withCost } from "./in-band-cost.js";
import type { ClientFrame, StreamTranslator } from "../upstreams/plan.js";
import { chatToOpenAiChat } from "../upstreams/openai/chat-plan.js";
import { messagesToAnthropic } from "../upstreams/anthropic/messages-plan.js";

/** A translator that answers each pushed event's data with the frames queued under that name. */
function scripted(script: Record<string, ClientFrame[]>, closing: ClientFrame[] = [{ data: "[DONE]", raw: true }]): StreamTranslator {
  return {
    push: (event) => script[event.data] ?? [],
    end: () => closing,
    fail: (type, message) => [{ data: { error: { type, message } } }],
    reportedUsage: () => null,
    deliveredText: () => "",
  };
}

describe("withCost", () => {
  it("adds cost to the usage object at its place, without changing the input", () => {
    const chunk = { id: "c", usage: { prompt_tokens: 1 } };
    expect(withCost(chunk, "usage", "0.01")).toEqual({ id: "c", usage: { prompt_tokens: 1, cost: "0.01" } });
    expect(chunk.usage).toEqual({ prompt_tokens: 1 });
    const event = { type: "response.completed", response: { id: "r", usage: { input_tokens: 2 } } };
    expect(withCost(event, "response.usage", "1.50")).toEqual({ type: "response.completed", response: { id: "r", usage: { input_tokens: 2, cost: "1.50" } } });
  });

  it("leaves a value without a usage object as it is", () => {
    const failed = { type: "response.failed", response: { id: "r", usage: null } };
    expect(withCost(failed, "response.usage", "0.01")).toBe(failed);
    expect(withCost({ choices: [] }, "usage", "0.01")).toEqual({ choices: [] });
    expect(withCost("[DONE]", "usage", "0.01")).toBe("[DONE]");
  });
});

describe("CostInBandStream", () => {
  const content: ClientFrame = { data: { choices: [{ delta: { content: "Hi" } }] } };
  const usageFrame: ClientFrame = { data: { choices: [], usage: { prompt_tokens: 3 } }, usageAt: "usage" };

  it("passes frames without usage at once and holds the usage frame until the end, stamped", () => {
    const stream = new CostInBandStream(scripted({ a: [content], u: [usageFrame] }));
    const first = stream.push({ data: "a" });
    expect(first).toEqual([content]);
    expect(stream.push({ data: "u" })).toEqual([]);
    stream.setCost("0.000021");
    expect(stream.end()).toEqual([{ data: { choices: [], usage: { prompt_tokens: 3, cost: "0.000021" } } }, { data: "[DONE]", raw: true }]);
  });

  it("holds what follows the usage frame, and releases an earlier usage frame unstamped when another comes", () => {
    const delta: ClientFrame = { event: "message_delta", data: { type: "message_delta", usage: { output_tokens: 1 } }, usageAt: "usage" };
    const stop: ClientFrame = { event: "message_stop", data: { type: "message_stop" } };
    const stream = new CostInBandStream(scripted({ d: [delta, stop], u: [usageFrame] }, []));
    expect(stream.push({ data: "d" })).toEqual([]);
    expect(stream.push({ data: "u" })).toEqual([delta, stop]);
    stream.setCost("2.00");
    expect(stream.end()).toEqual([{ data: { choices: [], usage: { prompt_tokens: 3, cost: "2.00" } } }]);
  });

  it("sends the held frames without a cost when settlement failed", () => {
    const stream = new CostInBandStream(scripted({ u: [usageFrame] }));
    stream.push({ data: "u" });
    stream.setCost(null);
    expect(stream.end()).toEqual([usageFrame, { data: "[DONE]", raw: true }]);
  });

  it("releases the held usage frame, stamped, before the in-band error of a failed stream", () => {
    const stream = new CostInBandStream(scripted({ u: [usageFrame] }));
    stream.push({ data: "u" });
    stream.setCost("0.10");
    expect(stream.fail("provider_error", "gone")).toEqual([
      { data: { choices: [], usage: { prompt_tokens: 3, cost: "0.10" } } },
      { data: { error: { type: "provider_error", message: "gone" } } },
    ]);
  });

  it("on a Chat pass-through: content chunks keep the fast path, the usage chunk gets the cost", () => {
    const model = { id: "gw-model", upstreamModel: "up" } as ModelConfig;
    const plan = chatToOpenAiChat({ model: "gw-model", messages: [], stream: true, stream_options: { include_usage: true } }, model);
    const stream = new CostInBandStream(plan.streamTranslator());
    const [chunk] = stream.push({ data: '{"id":"c","model":"up","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}' });
    expect(chunk).toMatchObject({ jsonText: true });
    expect(stream.push({ data: '{"id":"c","model":"up","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}' })).toEqual([]);
    stream.setCost("0.000005");
    const closing = stream.end();
    expect(closing.map((frame) => frame.data)).toEqual([
      { id: "c", model: "gw-model", choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, cost: "0.000005" } },
      "[DONE]",
    ]);
  });

  it("on a Chat pass-through whose upstream reports usage on every chunk, no content chunk is held", () => {
    const model = { id: "gw-model", upstreamModel: "up" } as ModelConfig;
    const plan = chatToOpenAiChat({ model: "gw-model", messages: [], stream: true, stream_options: { include_usage: true } }, model);
    const stream = new CostInBandStream(plan.streamTranslator());
    const usage = '"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}';
    expect(stream.push({ data: `{"id":"c","model":"up","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],${usage}}` })).toHaveLength(1);
    expect(stream.push({ data: `{"id":"c","model":"up","choices":[{"index":0,"delta":{"content":"!"},"finish_reason":null}],${usage}}` })).toHaveLength(1);
    expect(stream.push({ data: `{"id":"c","model":"up","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],${usage}}` })).toEqual([]);
  });

  it("on a Messages pass-through: message_delta and message_stop wait, message_delta gets the cost", () => {
    const model = { id: "claude-gw", upstreamModel: "claude-up" } as ModelConfig;
    const stream = new CostInBandStream(messagesToAnthropic({ model: "claude-gw", messages: [], stream: true }, model).streamTranslator());
    expect(stream.push({ event: "content_block_delta", data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}' })).toHaveLength(1);
    expect(stream.push({ event: "message_delta", data: '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}' })).toEqual([]);
    expect(stream.push({ event: "message_stop", data: '{"type":"message_stop"}' })).toEqual([]);
    stream.setCost("0.30");
    const closing = stream.end();
    expect(closing.map((frame) => frame.event)).toEqual(["message_delta", "message_stop"]);
    expect(closing[0]!.data).toMatchObject({ usage: { output_tokens: 2, cost: "0.30" } });
  });
});
