// Stage: relay. Turns the upstream answer into the client's response, scrubbed: a buffered body
// after its charge is settled, or a stream flushed event by event with backpressure.
import type { FastifyReply } from "fastify";
import { SseParser, type SseEvent } from "../core/sse.js";
import { GatewayError } from "../errors/catalogue.js";
import type { ClientFrame, StreamTranslator } from "./plan.js";
import { parseEventJson } from "./plans/usage.js";
import type { Scrubber } from "./scrub.js";

/**
 * Scrubs one JSON value and serialises it; any failure in the scrubber becomes a generic
 * internal_error, so no unscrubbed byte can leave through this path.
 */
export function scrubToJson(scrubber: Scrubber, value: unknown): string {
  try {
    return JSON.stringify(scrubber.scrubJson(value));
  } catch {
    throw new GatewayError("internal_error");
  }
}

/**
 * JSON text from upstream: as it is when the scrubber finds it clean (no parse, no re-serialising),
 * else parsed (a broken event is an upstream protocol error) and scrubbed like any value. A failure
 * of the scrubber itself is internal_error, as in scrubToJson.
 */
export function scrubJsonText(scrubber: Scrubber, text: string): string {
  let clean: boolean;
  try {
    clean = scrubber.isCleanJsonText(text);
  } catch {
    throw new GatewayError("internal_error");
  }
  return clean ? text : scrubToJson(scrubber, parseEventJson(text));
}

export function encodeFrames(frames: ClientFrame[], scrubber: Scrubber): string {
  let out = "";
  for (const frame of frames) {
    const data = frame.raw ? String(frame.data) : frame.jsonText ? scrubJsonText(scrubber, String(frame.data)) : scrubToJson(scrubber, frame.data);
    out += frame.event ? `event: ${frame.event}\ndata: ${data}\n\n` : `data: ${data}\n\n`;
  }
  return out;
}

export type StreamEnd = "completed" | "client_aborted" | "upstream_failed";

/**
 * Pipes upstream chunks through the parser and translator to the client. Resolves with how the
 * stream ended; never throws for upstream or client failures (they are part of the result).
 */
export async function pumpStream(options: {
  reply: FastifyReply;
  chunks: AsyncIterator<Buffer>;
  firstChunk: Buffer | null;
  translator: StreamTranslator;
  scrubber: Scrubber;
  signal: AbortSignal;
  /** Sends the response head; called once, just before the first scrubbed bytes are written. */
  open: () => void;
}): Promise<{ end: StreamEnd; failure?: string }> {
  const { reply, chunks, translator, scrubber, signal } = options;
  const raw = reply.raw;
  const parser = new SseParser();
  const handle = async (events: SseEvent[]): Promise<void> => {
    if (events.length === 0) return;
    const frames: ClientFrame[] = [];
    for (const event of events) frames.push(...translator.push(event));
    if (frames.length === 0) return;
    const text = encodeFrames(frames, scrubber);
    if (!raw.headersSent) options.open();
    await write(raw, text, signal);
  };
  try {
    let chunk: Buffer | null = options.firstChunk;
    while (chunk !== null) {
      await handle(parser.push(chunk));
      const next = await chunks.next();
      chunk = next.done ? null : next.value;
    }
    await handle(parser.end());
    return { end: "completed" };
  } catch (error) {
    if (signal.aborted) return { end: "client_aborted" };
    if (error instanceof GatewayError && error.type === "internal_error") return { end: "upstream_failed", failure: "internal_error" };
    return { end: "upstream_failed", failure: error instanceof Error ? error.message : "stream failed" };
  }
}

/** Writes with backpressure: waits for 'drain', or gives up when the client is gone. */
export function write(raw: FastifyReply["raw"], text: string, signal: AbortSignal): Promise<void> {
  if (raw.destroyed || signal.aborted) return Promise.reject(new Error("client gone"));
  if (raw.write(text)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      raw.off("drain", onDrain);
      raw.off("close", onClose);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = () => done();
    const onClose = () => done(new Error("client gone"));
    raw.once("drain", onDrain);
    raw.once("close", onClose);
  });
}
