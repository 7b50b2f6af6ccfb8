// Optional cross-check: the official SDKs' own stream accumulators must assemble our translated
// streams into the same text and tool calls as the source Chat fixture.
import { MessageStream } from "@anthropic-ai/sdk/lib/MessageStream";
import { ResponseStream } from "openai/lib/responses/ResponseStream";
import { describe, expect, it } from "vitest";
import { ChatStreamToMessagesEvents } from "../anthropic-messages/chat-stream-to-messages-events.js";
import { assembleChatStream } from "../openai-chat/assemble-chat-stream.js";
import type { ChatCompletionChunk } from "../openai-chat/types.js";
import { ChatStreamToResponsesEvents } from "../openai-responses/chat-stream-to-responses-events.js";
import { readFixture } from "./read-fixture.test-kit.js";

const FIXTURES = ["stream-text", "stream-tool-call", "stream-multi-tool", "stream-max-tokens", "azure-stream-tool-call", "azure-stream-content-filter"] as const;

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
  const chunks = readFixture<ChatCompletionChunk[]>(import.meta.url, `../openai-chat/__fixtures__/${name}.json`);
  const expected = assembleChatStream(chunks).choices[0]!.message;
  const expectedCalls = (expected.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, input: JSON.parse(c.function.arguments) as unknown }));

  it("@anthropic-ai/sdk MessageStream", async () => {
    const machine = new ChatStreamToMessagesEvents();
    const events = [...chunks.flatMap((c) => machine.push(c)), ...machine.finish()];
    const message = await MessageStream.fromReadableStream(ndjson(events)).finalMessage();
    const text = message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
    expect(text).toBe(expected.content ?? "");
    expect(message.content.flatMap((b) => (b.type === "tool_use" ? [{ id: b.id, name: b.name, input: b.input }] : []))).toEqual(expectedCalls);
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
  });
});
