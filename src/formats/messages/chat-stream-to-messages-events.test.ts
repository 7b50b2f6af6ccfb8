import { describe, expect, it } from "vitest";
import { assembleChatStream } from "../../wire/chat/assemble-chat-stream.js";
import type { ChatCompletionChunk } from "../../wire/chat/types.js";
import { CHAT_STREAM_FIXTURES, readFixture, toGolden } from "../../wire/shared/read-fixture.test-kit.js";
import { ChatStreamToMessagesEvents } from "./chat-stream-to-messages-events.js";
import type { AnthropicStreamEvent } from "../../wire/messages/types.js";

const FIXTURES = CHAT_STREAM_FIXTURES;

function chunksOf(name: string): ChatCompletionChunk[] {
  return readFixture<ChatCompletionChunk[]>(import.meta.url, `../../wire/chat/__fixtures__/${name}.json`);
}

function replay(chunks: ChatCompletionChunk[]): AnthropicStreamEvent[] {
  const machine = new ChatStreamToMessagesEvents({ model: "claude-via-gateway" });
  return [...chunks.flatMap((chunk) => machine.push(chunk)), ...machine.finish()];
}

/** Checks the ordering rules the Anthropic SDK accumulator relies on. */
function expectWellFormed(events: AnthropicStreamEvent[]): void {
  expect(events[0]?.type).toBe("message_start");
  expect(events.at(-1)?.type).toBe("message_stop");
  expect(events.at(-2)?.type).toBe("message_delta");
  let open: number | undefined;
  let next = 0;
  for (const event of events) {
    if (event.type === "content_block_start") {
      expect(open).toBeUndefined();
      expect(event.index).toBe(next++);
      open = event.index;
    } else if (event.type === "content_block_delta") {
      expect(event.index).toBe(open);
    } else if (event.type === "content_block_stop") {
      expect(event.index).toBe(open);
      open = undefined;
    }
  }
  expect(open).toBeUndefined();
}

describe("ChatStreamToMessagesEvents", () => {
  for (const name of FIXTURES) {
    it(`replays ${name} to the golden events`, async () => {
      const events = replay(chunksOf(name));
      expectWellFormed(events);
      await expect(toGolden(events)).toMatchFileSnapshot(`./__fixtures__/${name}.messages-events.golden.json`);
    });

    it(`${name}: concatenated text and input_json deltas equal the fixture's full text and arguments`, () => {
      const chunks = chunksOf(name);
      const expected = assembleChatStream(chunks).choices[0]!.message;
      const events = replay(chunks);
      const blocks = new Map<number, { type: string; id?: string; name?: string; text: string }>();
      for (const event of events) {
        if (event.type === "content_block_start") {
          const block = event.content_block;
          blocks.set(event.index, block.type === "tool_use" ? { type: "tool_use", id: block.id, name: block.name, text: "" } : { type: block.type, text: "" });
        }
        if (event.type === "content_block_delta") {
          const block = blocks.get(event.index)!;
          if (event.delta.type === "text_delta") block.text += event.delta.text;
          if (event.delta.type === "input_json_delta") block.text += event.delta.partial_json;
        }
      }
      const all = [...blocks.values()];
      expect(
        all
          .filter((b) => b.type === "text")
          .map((b) => b.text)
          .join(""),
      ).toBe(expected.content ?? "");
      expect(all.filter((b) => b.type === "tool_use").map((b) => ({ id: b.id, name: b.name, arguments: b.text }))).toEqual(
        (expected.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
      );
    });
  }

  it("reports usage from the trailing usage chunk, net of cached tokens", () => {
    const events = replay(chunksOf("stream-text"));
    const delta = events.find((e) => e.type === "message_delta");
    expect(delta).toEqual({
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { input_tokens: 12, output_tokens: 6, cache_creation_input_tokens: 0, cache_read_input_tokens: 8 },
    });
  });

  it("message_start carries the best input count known then: the estimate, or the upstream's first-chunk usage", () => {
    const chunks = chunksOf("stream-text");
    const estimated = new ChatStreamToMessagesEvents({ inputTokensEstimate: 42 }).push(chunks[0]!);
    expect(estimated[0]).toMatchObject({ type: "message_start", message: { usage: { input_tokens: 42, output_tokens: 0 } } });
    const counted = new ChatStreamToMessagesEvents({ inputTokensEstimate: 42 }).push({
      ...chunks[0]!,
      usage: { prompt_tokens: 30, completion_tokens: 1, total_tokens: 31, prompt_tokens_details: { cached_tokens: 10 } },
    });
    expect(counted[0]).toMatchObject({ type: "message_start", message: { usage: { input_tokens: 20, cache_read_input_tokens: 10, output_tokens: 0 } } });
  });

  it("waits for the usage chunk before message_delta, then ignores anything after message_stop", () => {
    const chunks = chunksOf("stream-text");
    const machine = new ChatStreamToMessagesEvents();
    const beforeUsage = chunks.slice(0, -1).flatMap((c) => machine.push(c));
    expect(beforeUsage.some((e) => e.type === "message_delta")).toBe(false);
    expect(machine.push(chunks.at(-1)!).map((e) => e.type)).toEqual(["message_delta", "message_stop"]);
    expect(machine.finish()).toEqual([]);
    expect(machine.push(chunks[1]!)).toEqual([]);
  });

  it("finish() closes everything when the upstream never sent finish_reason or usage", () => {
    const chunks = chunksOf("stream-tool-call").filter((c) => c.choices.length > 0 && c.choices[0]!.finish_reason === null);
    const machine = new ChatStreamToMessagesEvents();
    const events = [...chunks.flatMap((c) => machine.push(c)), ...machine.finish()];
    expectWellFormed(events);
    expect(events.find((e) => e.type === "message_delta")).toMatchObject({ delta: { stop_reason: "tool_use" }, usage: { output_tokens: 0 } });
  });

  it("finish() on an empty stream still produces a complete message", () => {
    const events = new ChatStreamToMessagesEvents({ id: "msg_x", model: "m" }).finish();
    expect(events.map((e) => e.type)).toEqual(["message_start", "message_delta", "message_stop"]);
  });

  it("abort() returns one in-band error event and ends the stream", () => {
    const machine = new ChatStreamToMessagesEvents();
    machine.push(chunksOf("stream-text")[1]!);
    expect(machine.abort("upstream reset")).toEqual([{ type: "error", error: { type: "api_error", message: "upstream reset" } }]);
    expect(machine.finish()).toEqual([]);
  });

  it("accepts usage on the finish_reason chunk itself", () => {
    const machine = new ChatStreamToMessagesEvents();
    const base = chunksOf("stream-text")[0]!;
    machine.push({ ...base, choices: [{ index: 0, delta: { content: "Hi" }, finish_reason: null }] });
    const events = machine.push({
      ...base,
      choices: [{ index: 0, delta: {}, finish_reason: "stop" }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
    });
    expect(events.map((e) => e.type)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
  });

  it("starts after Azure's prompt_filter_results chunk, deriving the message id from the first real chunk", () => {
    const chunks = chunksOf("azure-stream-tool-call");
    const machine = new ChatStreamToMessagesEvents();
    expect(machine.push(chunks[0]!)).toEqual([]);
    expect(machine.push(chunks[1]!)[0]).toMatchObject({ type: "message_start", message: { id: "msg_AZure1" } });
  });

  it("maps Azure's content_filter finish to refusal, with the usage that followed", () => {
    const events = replay(chunksOf("azure-stream-content-filter"));
    expect(events.find((e) => e.type === "message_delta")).toMatchObject({ delta: { stop_reason: "refusal" }, usage: { input_tokens: 40, output_tokens: 4 } });
  });

  it("maps a vLLM-style matched stop string to stop_sequence", () => {
    const machine = new ChatStreamToMessagesEvents();
    const base = chunksOf("stream-text")[0]!;
    machine.push({ ...base, choices: [{ index: 0, delta: { content: "Hi" }, finish_reason: null }] });
    machine.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop", stop_reason: "END" }] });
    expect(machine.finish()[0]).toMatchObject({ type: "message_delta", delta: { stop_reason: "stop_sequence", stop_sequence: "END" } });
  });
});
