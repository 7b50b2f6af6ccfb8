import { describe, expect, it } from "vitest";
import { encodeSseEvent, SseFrameTooLargeError, SseParser, type SseEvent } from "./sse.js";

const utf8 = new TextEncoder();

function parseAll(chunks: readonly Uint8Array[], parser = new SseParser()): SseEvent[] {
  const events: SseEvent[] = [];
  for (const chunk of chunks) events.push(...parser.push(chunk));
  events.push(...parser.end());
  return events;
}

function splitAt(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let last = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    out.push(bytes.slice(last, cut));
    last = cut;
  }
  out.push(bytes.slice(last));
  return out;
}

// Deterministic PRNG so a failing split can be reproduced.
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const MIXED_STREAM =
  "\uFEFF: keepalive\r\n\r\n" +
  'event: message_start\r\ndata: {"type":"message_start","text":"héllo 你好 🎉"}\r\n\r\n' +
  "id: 7\ndata: line one\ndata: line two\n\n" +
  "data:no-space\rdata:  two spaces\r\r" +
  "event: ping\n\n" + // no data: not dispatched
  "data\n\n" + // field with no colon: empty data, dispatched
  "retry: 1000\nfoo: bar\ndata: [DONE]\n\n" +
  "data: trailing without blank line\n";

const MIXED_EXPECTED: SseEvent[] = [
  { event: "message_start", data: '{"type":"message_start","text":"héllo 你好 🎉"}' },
  { id: "7", data: "line one\nline two" },
  { data: "no-space\n two spaces" },
  { data: "" },
  { data: "[DONE]" },
];

describe("SseParser", () => {
  it("parses a stream delivered in one chunk", () => {
    expect(parseAll([utf8.encode(MIXED_STREAM)])).toEqual(MIXED_EXPECTED);
  });

  it("gives the same events for every single split point and byte-by-byte delivery", () => {
    const bytes = utf8.encode(MIXED_STREAM);
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(parseAll(splitAt(bytes, [cut])), `cut at ${cut}`).toEqual(MIXED_EXPECTED);
    }
    const singles = Array.from(bytes, (b) => Uint8Array.of(b));
    expect(parseAll(singles)).toEqual(MIXED_EXPECTED);
  });

  it("gives the same events for random multi-way splits, empty chunks included", () => {
    const bytes = utf8.encode(MIXED_STREAM);
    const random = prng(42);
    for (let round = 0; round < 300; round++) {
      const cuts = Array.from({ length: 1 + Math.floor(random() * 12) }, () => Math.floor(random() * (bytes.length + 1)));
      expect(parseAll(splitAt(bytes, cuts)), `cuts ${cuts.join(",")}`).toEqual(MIXED_EXPECTED);
    }
  });

  it("reassembles a multi-byte character split across chunks", () => {
    const bytes = utf8.encode("data: 🎉\n\n");
    // The emoji is 4 bytes at offsets 6..9; cut inside it at every position.
    for (const cut of [7, 8, 9]) expect(parseAll(splitAt(bytes, [cut]))).toEqual([{ data: "🎉" }]);
  });

  it("treats a CRLF split across chunks as one line end", () => {
    const parser = new SseParser();
    expect(parser.push(utf8.encode("data: a\r"))).toEqual([]);
    expect(parser.push(utf8.encode("\n\r"))).toEqual([{ data: "a" }]);
    expect(parser.push(utf8.encode("\ndata: b\r\n\r\n"))).toEqual([{ data: "b" }]);
  });

  it("returns several events from one chunk and keeps a half event for later", () => {
    const parser = new SseParser();
    const first = parser.push(utf8.encode('data: {"a":1}\n\ndata: {"b":2}\n\ndata: {"c"'));
    expect(first).toEqual([{ data: '{"a":1}' }, { data: '{"b":2}' }]);
    expect(parser.push(utf8.encode(":3}\n\n"))).toEqual([{ data: '{"c":3}' }]);
  });

  it("strips the BOM only at stream start, even when the BOM itself is split", () => {
    const bytes = utf8.encode("\uFEFFdata: x\n\ndata: \uFEFFy\n\n");
    expect(parseAll(splitAt(bytes, [1, 2]))).toEqual([{ data: "x" }, { data: "\uFEFFy" }]);
  });

  it("does not dispatch an event without data and resets event and id per event", () => {
    const events = parseAll([utf8.encode("event: a\nid: 1\n\ndata: x\n\nevent: b\ndata: y\n\n")]);
    expect(events).toEqual([{ data: "x" }, { event: "b", data: "y" }]);
  });

  it("ignores comments and an id containing NULL", () => {
    expect(parseAll([utf8.encode(": hi\nid: a\0b\ndata: x\n: mid-event comment\n\n")])).toEqual([{ data: "x" }]);
  });

  it("drops a trailing event without a blank line at end", () => {
    const parser = new SseParser();
    expect(parser.push(utf8.encode("data: complete\n\ndata: cut off"))).toEqual([{ data: "complete" }]);
    expect(parser.end()).toEqual([]);
    // end() resets: the next stream starts clean.
    expect(parser.push(utf8.encode("data: next\n\n"))).toEqual([{ data: "next" }]);
  });

  it.each([
    ["Uint8Array", (text: string): Uint8Array => utf8.encode(text)],
    ["Buffer", (text: string): Uint8Array => Buffer.from(text)],
  ])("does not keep a reference to the caller's %s", (_kind, bytes) => {
    const parser = new SseParser();
    const buffer = bytes("data: abc");
    parser.push(buffer);
    buffer.fill(0x78);
    expect(parser.push(bytes("\n\n"))).toEqual([{ data: "abc" }]);
  });

  it("decodes invalid UTF-8 as the WHATWG decoder does (U+FFFD per maximal subpart)", () => {
    const value = [0x61, 0xff, 0xc3, 0x28, 0xe2, 0x82, 0x62, 0xf0, 0x9f, 0x98, 0x63, 0xed, 0xa0, 0x80, 0xef, 0xbb, 0xbf];
    const line = Buffer.concat([Buffer.from("data: "), Buffer.from(value), Buffer.from("\n\n")]);
    const expected = new TextDecoder("utf-8", { ignoreBOM: true }).decode(new Uint8Array(value));
    expect(parseAll([line])).toEqual([{ data: expected }]);
  });

  it("accepts Node Buffers", () => {
    expect(parseAll([Buffer.from("event: e\ndata: 1\n\n")])).toEqual([{ event: "e", data: "1" }]);
  });

  describe("size guard", () => {
    it("throws SseFrameTooLargeError for an event over the limit, across lines", () => {
      const parser = new SseParser({ maxEventBytes: 32 });
      expect(parser.push(utf8.encode("data: 0123456789\n"))).toEqual([]);
      expect(() => parser.push(utf8.encode("data: 0123456789abcdef\n"))).toThrow(SseFrameTooLargeError);
    });

    it("throws while an unterminated line grows past the limit, and stays failed until end()", () => {
      const parser = new SseParser({ maxEventBytes: 64 });
      parser.push(utf8.encode("data: "));
      let thrown: unknown;
      try {
        for (let i = 0; i < 10; i++) parser.push(utf8.encode("0123456789"));
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(SseFrameTooLargeError);
      expect((thrown as SseFrameTooLargeError).maxBytes).toBe(64);
      expect(() => parser.push(utf8.encode("\n\n"))).toThrow(SseFrameTooLargeError);
      parser.end();
      expect(parser.push(utf8.encode("data: ok\n\n"))).toEqual([{ data: "ok" }]);
    });

    it("counts per event, not per stream, and ignores comments once they end", () => {
      const parser = new SseParser({ maxEventBytes: 16 });
      const events: SseEvent[] = [];
      for (let i = 0; i < 100; i++) events.push(...parser.push(utf8.encode(`: ping\ndata: ${i % 10}abcdef\n\n`)));
      expect(events).toHaveLength(100);
    });

    it("defaults to 8 MiB", () => {
      const parser = new SseParser();
      const big = "x".repeat(8 * 1024 * 1024 - 6);
      expect(parser.push(utf8.encode(`data: ${big}\n\n`))).toHaveLength(1);
      expect(() => parser.push(utf8.encode(`data: ${big}x\n\n`))).toThrow(SseFrameTooLargeError);
    });
  });

  it("parses a large stream in small chunks in linear time", () => {
    const frame = encodeSseEvent(JSON.stringify({ choices: [{ delta: { content: "token " } }] }));
    const bytes = utf8.encode(frame.repeat(20_000));
    const parser = new SseParser();
    let count = 0;
    const started = performance.now();
    for (let at = 0; at < bytes.length; at += 7) count += parser.push(bytes.subarray(at, at + 7)).length;
    expect(count).toBe(20_000);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("handles one huge event fed in many pieces without quadratic joins", () => {
    const parser = new SseParser();
    const piece = utf8.encode("y".repeat(1024));
    parser.push(utf8.encode("data: "));
    const started = performance.now();
    for (let i = 0; i < 4096; i++) parser.push(piece);
    const [event] = parser.push(utf8.encode("\n\n"));
    expect(event?.data.length).toBe(4 * 1024 * 1024);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe("encodeSseEvent", () => {
  it("writes one whole frame", () => {
    expect(encodeSseEvent('{"a":1}')).toBe('data: {"a":1}\n\n');
    expect(encodeSseEvent('{"type":"ping"}', "ping")).toBe('event: ping\ndata: {"type":"ping"}\n\n');
    expect(encodeSseEvent("x", "")).toBe("data: x\n\n");
  });

  it("splits data with line breaks into several data lines", () => {
    expect(encodeSseEvent("a\nb\r\nc\rd")).toBe("data: a\ndata: b\ndata: c\ndata: d\n\n");
    expect(encodeSseEvent("")).toBe("data: \n\n");
  });

  it("rejects an event name with a line break", () => {
    expect(() => encodeSseEvent("x", "a\ndata: injected")).toThrow(TypeError);
  });

  it("round-trips through the parser", () => {
    const cases: Array<[string, string | undefined]> = [
      ["plain", undefined],
      ["multi\nline\n", "delta"],
      [" leading space", undefined],
      ["", "empty"],
      ["ünïcödé 你好", "x"],
    ];
    const text = cases.map(([data, event]) => encodeSseEvent(data, event)).join("");
    const expected = cases.map(([data, event]) => (event ? { event, data } : { data }));
    expect(parseAll([utf8.encode(text)])).toEqual(expected);
  });
});
