import { describe, expect, it } from "vitest";
import { assembleChatStream } from "../../wire/chat/assemble-chat-stream.js";
import type { ChatCompletionChunk } from "../../wire/chat/types.js";
import { CHAT_STREAM_FIXTURES, readFixture, toGolden } from "../../wire/shared/read-fixture.test-kit.js";
import { ChatStreamToResponsesEvents } from "./chat-stream-to-responses-events.js";
import type { ResponsesRequest, ResponsesStreamEvent } from "../../wire/responses/types.js";

const FIXTURES = CHAT_STREAM_FIXTURES;
const REQUEST: ResponsesRequest = { model: "gpt-via-gateway", input: "hi", instructions: "Be brief." };

function chunksOf(name: string): ChatCompletionChunk[] {
  return readFixture<ChatCompletionChunk[]>(import.meta.url, `../../wire/chat/__fixtures__/${name}.json`);
}

function newMachine(): ChatStreamToResponsesEvents {
  return new ChatStreamToResponsesEvents({ id: "resp_test", createdAt: 1760000000, clock: () => 1760000009, model: "gpt-via-gateway", request: REQUEST });
}

function replay(chunks: ChatCompletionChunk[]): ResponsesStreamEvent[] {
  const machine = newMachine();
  return [...chunks.flatMap((chunk) => machine.push(chunk)), ...machine.finish()];
}

describe("ChatStreamToResponsesEvents", () => {
  for (const name of FIXTURES) {
    it(`replays ${name} to the golden events`, async () => {
      const events = replay(chunksOf(name));
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
      expect(events.slice(0, 2).map((e) => e.type)).toEqual(["response.created", "response.in_progress"]);
      // Every added item is done, and the stream ends with exactly one terminal event.
      const added = events.filter((e) => e.type === "response.output_item.added").length;
      expect(events.filter((e) => e.type === "response.output_item.done").length).toBe(added);
      expect(events.filter((e) => e.type === "response.completed" || e.type === "response.incomplete")).toHaveLength(1);
      await expect(toGolden(events)).toMatchFileSnapshot(`./__fixtures__/${name}.responses-events.golden.json`);
    });

    it(`${name}: concatenated text and argument deltas equal the fixture's full text and arguments`, () => {
      const chunks = chunksOf(name);
      const expected = assembleChatStream(chunks).choices[0]!.message;
      const events = replay(chunks);
      let text = "";
      const args = new Map<string, string>();
      for (const event of events) {
        if (event.type === "response.output_text.delta") text += event.delta;
        if (event.type === "response.function_call_arguments.delta") args.set(event.item_id, (args.get(event.item_id) ?? "") + event.delta);
      }
      expect(text).toBe(expected.content ?? "");
      const calls = events.flatMap((e) => (e.type === "response.output_item.done" && e.item.type === "function_call" ? [e.item] : []));
      expect(calls.map((c) => ({ id: c.call_id, name: c.name, arguments: args.get(c.id) ?? "" }))).toEqual(
        (expected.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
      );
      // The done events carry the same full values.
      expect(calls.map((c) => c.arguments)).toEqual((expected.tool_calls ?? []).map((c) => c.function.arguments));
    });
  }

  it("ends a length stop with response.incomplete and reason max_output_tokens", () => {
    const last = replay(chunksOf("stream-max-tokens")).at(-1)!;
    expect(last.type).toBe("response.incomplete");
    expect(last).toMatchObject({ response: { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } } });
  });

  it("puts the full output and usage on response.completed", () => {
    const last = replay(chunksOf("stream-multi-tool")).at(-1)!;
    expect(last).toMatchObject({
      type: "response.completed",
      response: {
        status: "completed",
        usage: { input_tokens: 120, input_tokens_details: { cached_tokens: 64 }, output_tokens: 40, output_tokens_details: { reasoning_tokens: 12 }, total_tokens: 160 },
        output: [
          { type: "function_call", call_id: "call_r1", name: "read_file", status: "completed", arguments: '{"path": "src/a.ts"}' },
          { type: "function_call", call_id: "call_b2", name: "bash", status: "completed" },
        ],
      },
    });
  });

  it("finish() emits output_item.done and response.completed even without finish_reason or usage", () => {
    const chunks = chunksOf("stream-text").filter((c) => c.choices.length > 0 && c.choices[0]!.finish_reason === null);
    const machine = newMachine();
    const events = [...chunks.flatMap((c) => machine.push(c)), ...machine.finish()];
    expect(events.slice(-4).map((e) => e.type)).toEqual(["response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"]);
    expect(machine.response?.status).toBe("completed");
  });

  it("abort() emits response.failed with the message and stops", () => {
    const machine = newMachine();
    machine.push(chunksOf("stream-text")[1]!);
    const events = machine.abort("upstream reset");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "response.failed", response: { status: "failed", error: { code: "server_error", message: "upstream reset" } } });
    expect(machine.finish()).toEqual([]);
  });

  it("restores the namespace of a flattened tool name", () => {
    const machine = new ChatStreamToResponsesEvents({ id: "resp_ns", toolNamespaces: { crm__lookup: { namespace: "crm", name: "lookup" } } });
    const base = chunksOf("stream-text")[0]!;
    const events = [
      ...machine.push({
        ...base,
        choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", function: { name: "crm__lookup", arguments: "{}" } }] }, finish_reason: "tool_calls" }],
      }),
      ...machine.finish(),
    ];
    const done = events.find((e) => e.type === "response.output_item.done");
    expect(done).toMatchObject({ item: { name: "lookup", namespace: "crm" } });
    expect(machine.response?.output[0]).toMatchObject({ type: "function_call", name: "lookup", namespace: "crm", arguments: "{}" });
  });

  it("assistantMessage() gives the Chat turn to store for previous_response_id", () => {
    const machine = newMachine();
    for (const chunk of chunksOf("stream-tool-call")) machine.push(chunk);
    expect(machine.assistantMessage()).toEqual({
      role: "assistant",
      content: "Let me check.",
      tool_calls: [{ id: "call_a1", type: "function", function: { name: "get_weather", arguments: '{"city": "Oslo", "unit": "celsius"}' } }],
    });
  });
});
