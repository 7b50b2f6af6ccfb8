import { describe, expect, it } from "vitest";
import { assembleChatStream } from "../../wire/chat/assemble-chat-stream.js";
import type { ChatCompletionChunk } from "../../wire/chat/types.js";
import { readFixture, toGolden } from "../../wire/shared/read-fixture.test-kit.js";
import type { ChatStreamItem } from "../chat-chunk-stream.js";
import { MessagesEventsToChatStream } from "./messages-events-to-chat-stream.js";
import type { AnthropicStreamEvent } from "../../wire/messages/types.js";

const FIXTURES = ["events-text-and-tools", "events-max-tokens"] as const;

function eventsOf(name: string): AnthropicStreamEvent[] {
  return readFixture<AnthropicStreamEvent[]>(import.meta.url, `./__fixtures__/${name}.json`);
}

function replay(events: AnthropicStreamEvent[]): ChatStreamItem[] {
  const machine = new MessagesEventsToChatStream({ created: 1760000000, model: "claude-via-gateway" });
  return [...events.flatMap((event) => machine.push(event)), ...machine.finish()];
}

function chunksOnly(items: ChatStreamItem[]): ChatCompletionChunk[] {
  return items.filter((item): item is ChatCompletionChunk => !("error" in item));
}

describe("MessagesEventsToChatStream", () => {
  for (const name of FIXTURES) {
    it(`replays ${name} to the golden chunks`, async () => {
      const items = replay(eventsOf(name));
      const chunks = chunksOnly(items);
      expect(chunks).toHaveLength(items.length);
      expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
      // Finish chunk, then the usage chunk with empty choices, last.
      expect(chunks.at(-1)!.choices).toEqual([]);
      expect(chunks.at(-2)!.choices[0]!.finish_reason).not.toBeNull();
      await expect(toGolden(items)).toMatchFileSnapshot(`./__fixtures__/${name}.chat-chunks.golden.json`);
    });

    it(`${name}: concatenated content and argument deltas equal the fixture's full text and inputs`, () => {
      const events = eventsOf(name);
      let text = "";
      const inputs = new Map<number, { id: string; name: string; json: string }>();
      for (const event of events) {
        if (event.type === "content_block_start" && event.content_block.type === "tool_use") {
          inputs.set(event.index, { id: event.content_block.id, name: event.content_block.name, json: "" });
        }
        if (event.type === "content_block_delta" && event.delta.type === "text_delta") text += event.delta.text;
        if (event.type === "content_block_delta" && event.delta.type === "input_json_delta") inputs.get(event.index)!.json += event.delta.partial_json;
      }
      const assembled = assembleChatStream(chunksOnly(replay(events))).choices[0]!.message;
      expect(assembled.content ?? "").toBe(text);
      expect((assembled.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, json: c.function.arguments }))).toEqual([...inputs.values()]);
    });
  }

  it("maps stop reasons and cumulative usage into the final chunks", () => {
    const chunks = chunksOnly(replay(eventsOf("events-text-and-tools")));
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe("tool_calls");
    expect(chunks.at(-1)!.usage).toEqual({
      prompt_tokens: 412 + 2048 + 100,
      completion_tokens: 57,
      total_tokens: 412 + 2048 + 100 + 57,
      prompt_tokens_details: { cached_tokens: 2048, cache_write_tokens: 100 },
      // Anthropic reports no thinking count: estimated from the 19 characters of thinking streamed.
      completion_tokens_details: { reasoning_tokens: 5 },
    });
    expect(chunksOnly(replay(eventsOf("events-max-tokens"))).at(-2)!.choices[0]!.finish_reason).toBe("length");
  });

  it("gives each tool_use block its own tool_calls index", () => {
    const chunks = chunksOnly(replay(eventsOf("events-text-and-tools")));
    const starts = chunks.flatMap((c) => c.choices.flatMap((ch) => ch.delta.tool_calls ?? [])).filter((t) => t.id !== undefined);
    expect(starts.map((t) => [t.index, t.id])).toEqual([
      [0, "toolu_01XY"],
      [1, "toolu_02ZW"],
    ]);
  });

  it("turns an error event into the Chat in-band error and stops", () => {
    const machine = new MessagesEventsToChatStream();
    machine.push(eventsOf("events-max-tokens")[0]!);
    expect(machine.push({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })).toEqual([
      { error: { message: "Overloaded", type: "overloaded_error", param: null, code: null } },
    ]);
    expect(machine.finish()).toEqual([]);
  });

  it("finish() without message_stop still ends with a finish chunk and a usage chunk", () => {
    const machine = new MessagesEventsToChatStream({ id: "chatcmpl-x", created: 1 });
    const events = eventsOf("events-max-tokens").slice(0, 3);
    const items = chunksOnly([...events.flatMap((e) => machine.push(e)), ...machine.finish()]);
    expect(items.at(-2)!.choices[0]!.finish_reason).toBe("stop");
    expect(items.at(-1)!.usage).toMatchObject({ prompt_tokens: 30, completion_tokens: 1 });
  });
});
