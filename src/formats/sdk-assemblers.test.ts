// Optional cross-check: the official SDKs' own stream accumulators must assemble our translated
// streams into the same text and tool calls as the source Chat fixture.
import { MessageStream } from "@anthropic-ai/sdk/lib/MessageStream";
import { ResponseStream } from "openai/lib/responses/ResponseStream";
import { describe, expect, it } from "vitest";
import { ChatStreamToMessagesEvents } from "./messages/chat-stream-to-messages-events.js";
import { assembleChatStream } from "../wire/chat/assemble-chat-stream.js";
import type { ChatCompletionChunk } from "../wire/chat/types.js";
import { ChatStreamToResponsesEvents } from "./responses/chat-stream-to-responses-events.js";
import { convertResponsesInputToChat } from "./responses/convert-responses-input-to-chat.js";
import { WarningList } from "../wire/shared/narrow.js";
import { CHAT_STREAM_FIXTURES, readFixture } from "../wire/shared/read-fixture.test-kit.js";

const FIXTURES = CHAT_STREAM_FIXTURES;

/** The signed thinking blocks a fixture carries, in order. */
function thinkingBlocksOf(chunks: readonly ChatCompletionChunk[]): unknown[] {
  return chunks.flatMap((c) => c.choices.flatMap((choice) => choice.delta.thinking_blocks ?? []));
}

/** The SDKs' fromReadableStream reads newline-delimited JSON events. */
function ndjson(events: readonly unknown[]): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(events.map((e) => `${JSON.stringify(e)}\n`).join(""));
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

describe.each(FIXTURES)("SDK accumulators agree on %s", (name) => {
  const chunks = readFixture<ChatCompletionChunk[]>(import.meta.url, `../wire/chat/__fixtures__/${name}.json`);
  const expected = assembleChatStream(chunks).choices[0]!.message;
  const expectedCalls = (expected.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, input: JSON.parse(c.function.arguments) as unknown }));

  it("@anthropic-ai/sdk MessageStream", async () => {
    const machine = new ChatStreamToMessagesEvents();
    const events = [...chunks.flatMap((c) => machine.push(c)), ...machine.finish()];
    const message = await MessageStream.fromReadableStream(ndjson(events)).finalMessage();
    const text = message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
    expect(text).toBe(expected.content ?? "");
    expect(message.content.flatMap((b) => (b.type === "tool_use" ? [{ id: b.id, name: b.name, input: b.input }] : []))).toEqual(expectedCalls);
    // Thinking assembles into the same signed blocks, ready to be sent back.
    expect(message.content.filter((b) => b.type === "thinking" || b.type === "redacted_thinking")).toEqual(thinkingBlocksOf(chunks));
  });

  it("openai ResponseStream", async () => {
    const machine = new ChatStreamToResponsesEvents();
    const events = [...chunks.flatMap((c) => machine.push(c)), ...machine.finish()];
    const stream = ResponseStream.fromReadableStream(ndjson(events));
    // A length or content-filter stop ends with response.incomplete, which the SDK does not treat as a final response.
    if (name === "stream-max-tokens" || name === "azure-stream-content-filter") {
      for await (const event of stream) void event;
      return;
    }
    const response = await stream.finalResponse();
    expect(response.output_text).toBe(expected.content ?? "");
    const calls = response.output.flatMap((item) => (item.type === "function_call" ? [{ id: item.call_id, name: item.name, input: JSON.parse(item.arguments) as unknown }] : []));
    expect(calls).toEqual(expectedCalls);
    const reasoning = response.output.filter((item) => item.type === "reasoning");
    expect(reasoning.flatMap((item) => item.summary.map((part) => part.text)).join("")).toBe(expected.reasoning_content ?? "");
    // encrypted_content carries the signed blocks back into the next request.
    const next = convertResponsesInputToChat([...reasoning, ...response.output.filter((item) => item.type === "function_call")], "system", new WarningList());
    expect(next.flatMap((m) => (m.role === "assistant" ? (m.thinking_blocks ?? []) : []))).toEqual(thinkingBlocksOf(chunks));
  });
});
