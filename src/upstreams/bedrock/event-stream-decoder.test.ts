import { EventStreamCodec } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { describe, expect, it } from "vitest";
import { EventStreamDecoder } from "./event-stream-decoder.js";

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function message(headers: Record<string, string>, payload: unknown): Uint8Array {
  return codec.encode({
    headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, { type: "string" as const, value }])),
    body: fromUtf8(JSON.stringify(payload)),
  });
}

const event = (type: string, payload: unknown) => message({ ":event-type": type, ":content-type": "application/json", ":message-type": "event" }, payload);

const STREAM = Buffer.concat([
  event("messageStart", { role: "assistant" }),
  event("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "héllo 👋" } }),
  event("messageStop", { stopReason: "end_turn" }),
]);
const EXPECTED = [
  { event: "messageStart", data: '{"role":"assistant"}' },
  { event: "contentBlockDelta", data: '{"contentBlockIndex":0,"delta":{"text":"héllo 👋"}}' },
  { event: "messageStop", data: '{"stopReason":"end_turn"}' },
];

describe("EventStreamDecoder", () => {
  it("decodes a whole stream given at once", () => {
    const decoder = new EventStreamDecoder();
    expect([...decoder.push(STREAM), ...decoder.end()]).toEqual(EXPECTED);
  });

  it("decodes the same events whatever the split: every pair of cut points, inside preludes and multi-byte characters too", () => {
    for (let first = 1; first < STREAM.length; first += 3) {
      for (let second = first; second < STREAM.length; second += 7) {
        const decoder = new EventStreamDecoder();
        const events = [...decoder.push(STREAM.subarray(0, first)), ...decoder.push(STREAM.subarray(first, second)), ...decoder.push(STREAM.subarray(second)), ...decoder.end()];
        expect(events).toEqual(EXPECTED);
      }
    }
  });

  it("decodes a stream fed one byte at a time", () => {
    const decoder = new EventStreamDecoder();
    const events = [];
    for (const byte of STREAM) events.push(...decoder.push(Uint8Array.of(byte)));
    expect(events).toEqual(EXPECTED);
  });

  it("decodes a 4 MiB message arriving in 1 KiB chunks", () => {
    const text = "x".repeat(4 * 1024 * 1024);
    const bytes = Buffer.from(event("contentBlockDelta", { delta: { text } }));
    const decoder = new EventStreamDecoder();
    const events = [];
    for (let at = 0; at < bytes.length; at += 1024) events.push(...decoder.push(bytes.subarray(at, at + 1024)));
    expect(events).toHaveLength(1);
    expect(events[0]!.data.length).toBe(JSON.stringify({ delta: { text } }).length);
  });

  it("fails on an exception message, without the upstream's message text", () => {
    const decoder = new EventStreamDecoder();
    const exception = message({ ":exception-type": "throttlingException", ":content-type": "application/json", ":message-type": "exception" }, { message: "secret detail" });
    expect(decoder.push(event("messageStart", {}))).toHaveLength(1);
    expect(() => decoder.push(exception)).toThrow(/^the upstream stream failed: throttlingException$/);
  });

  it("fails on a corrupt message (CRC), an absurd length, and a stream that ends inside a message", () => {
    const corrupt = Buffer.from(event("messageStart", {}));
    corrupt.writeUInt8(corrupt.readUInt8(corrupt.length - 6) ^ 0xff, corrupt.length - 6);
    expect(() => new EventStreamDecoder().push(corrupt)).toThrow("corrupt");
    const huge = Buffer.alloc(12);
    huge.writeUInt32BE(64 * 1024 * 1024, 0);
    expect(() => new EventStreamDecoder().push(huge)).toThrow("bytes");
    const cut = new EventStreamDecoder();
    expect(cut.push(STREAM.subarray(0, 20))).toEqual([]);
    expect(() => cut.end()).toThrow("ended inside a message");
  });
});
