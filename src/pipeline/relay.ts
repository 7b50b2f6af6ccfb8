// Stage: relay. Turns the upstream answer into the client's response, scrubbed: a buffered body
// after its charge is settled, or a stream flushed event by event with backpressure.
import type { Readable } from "node:stream";
import type { FastifyReply } from "fastify";
import type { Cancellation } from "../core/cancellation.js";
import { SseParser, type SseEvent } from "../core/sse.js";
import type { StreamDecoder } from "../upstreams/descriptor.js";
import { GatewayError } from "../errors/catalogue.js";
import type { ClientFrame, StreamTranslator } from "../upstreams/plan.js";
import { parseEventJson } from "../upstreams/usage-readers.js";
import type { Scrubber } from "./scrub.js";

/**
 * Scrubs one JSON value and serialises it; any failure in the scrubber becomes a generic
 * internal_error, so no unscrubbed byte can leave through this path.
 */
export function scrubToJson(scrubber: Scrubber, value: unknown): string {
  return JSON.stringify(scrubValue(scrubber, value));
}

/** Scrubs one JSON value; a failure in the scrubber becomes a generic internal_error, as in scrubToJson. */
export function scrubValue(scrubber: Scrubber, value: unknown): unknown {
  try {
    return scrubber.scrubJson(value);
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

/** The gateway's own frames (its error events): nothing from upstream in them, so nothing to scrub. */
export function encodeOwnFrames(frames: ClientFrame[]): string {
  let out = "";
  for (const frame of frames) out += `${frame.event ? `event: ${frame.event}\n` : ""}data: ${JSON.stringify(frame.data)}\n\n`;
  return out;
}

/**
 * How a stream's frames become bytes: SSE for every format but one, and the JSON array Google's
 * REST API streams without alt=sse (`[{...}\r\n,{...}]`, one element per frame, the event names
 * dropped). An encoder is made per stream: the array's first element is written without a comma.
 */
export interface FrameEncoder {
  contentType: string;
  /** Upstream-derived frames, scrubbed. */
  frames: (frames: ClientFrame[], scrubber: Scrubber) => string;
  /** The gateway's own frames (its error events). */
  own: (frames: ClientFrame[]) => string;
  /** What ends the stream after the last frames ("]" for the array). */
  close: () => string;
}

export function sseEncoder(): FrameEncoder {
  return { contentType: "text/event-stream; charset=utf-8", frames: encodeFrames, own: encodeOwnFrames, close: () => "" };
}

export function jsonArrayEncoder(): FrameEncoder {
  let started = false;
  const join = (elements: string[]): string => {
    let out = "";
    for (const element of elements) {
      out += `${started ? "\r\n," : "["}${element}`;
      started = true;
    }
    return out;
  };
  return {
    contentType: "application/json; charset=utf-8",
    frames: (frames, scrubber) =>
      join(frames.filter((frame) => !frame.raw).map((frame) => (frame.jsonText ? scrubJsonText(scrubber, String(frame.data)) : scrubToJson(scrubber, frame.data)))),
    own: (frames) => join(frames.filter((frame) => !frame.raw).map((frame) => JSON.stringify(frame.data))),
    close: () => (started ? "]" : "[]"),
  };
}

/** limit_reached: the gateway stopped relaying at a clamped output limit (output-limit.ts); the upstream body is dropped. */
export type StreamEnd = "completed" | "limit_reached" | "client_aborted" | "upstream_failed";

/**
 * Pipes the upstream body through the parser and translator to the client, chunk by chunk as the
 * body emits them ('data' events: no promise per chunk), with backpressure: when the client's socket
 * is full the upstream body is paused until 'drain'. Resolves with how the stream ended; never
 * rejects (upstream and client failures are part of the result). When it did not complete, the
 * upstream body is destroyed, so its connection is not left waiting for a reader. When it completed,
 * the response may still be corked: the caller ends it (raw.end uncorks) or destroys it.
 */
export function pumpStream(options: {
  reply: FastifyReply;
  /** The upstream body, its first chunk already read (readFirstChunk). */
  body: Readable;
  firstChunk: Buffer | null;
  /** The upstream type's decoder (upstreamOf(provider).streamDecoder()); an SSE parser when not given. */
  decoder?: StreamDecoder;
  translator: StreamTranslator;
  scrubber: Scrubber;
  signal: Cancellation;
  /** Sends the response head; called once, just before the first scrubbed bytes are written. */
  open: () => void;
  /** Checked after each delivery: true ends the pump as limit_reached (output-limit.ts). */
  limitReached?: () => boolean;
  /** How frames are written; SSE when not given. */
  encoder?: FrameEncoder;
}): Promise<{ end: StreamEnd; failure?: string }> {
  const { reply, body, translator, scrubber, signal } = options;
  const raw = reply.raw;
  const parser = options.decoder ?? new SseParser();
  const encode = options.encoder?.frames ?? encodeFrames;
  return new Promise((resolve) => {
    let done = false;
    // Frames written within one event-loop turn leave together: the response is corked at the
    // turn's first write and uncorked by an immediate. When the upstream ends in that same turn
    // (its last frames and its end usually arrive in one read), the immediate is cancelled and the
    // response stays corked, so those frames leave with the closing frames and the response's end
    // (the caller's raw.end(), which uncorks) in one write instead of two.
    let uncorkAfterTurn: NodeJS.Immediate | null = null;
    const uncork = () => {
      uncorkAfterTurn = null;
      raw.uncork();
    };
    const finish = (result: { end: StreamEnd; failure?: string }) => {
      if (done) return;
      done = true;
      if (uncorkAfterTurn !== null) {
        clearImmediate(uncorkAfterTurn);
        uncorkAfterTurn = null;
        if (result.end !== "completed") raw.uncork();
      }
      body.off("data", onData);
      body.off("end", onEnd);
      body.off("error", onError);
      raw.off("drain", onDrain);
      signal.off("abort", onAbort);
      if (result.end !== "completed") body.destroy();
      resolve(result);
    };
    const fail = (error: unknown) => {
      if (signal.aborted) return finish({ end: "client_aborted" });
      if (error instanceof GatewayError && error.type === "internal_error") return finish({ end: "upstream_failed", failure: "internal_error" });
      finish({ end: "upstream_failed", failure: error instanceof Error ? error.message : "stream failed" });
    };
    /** Writes the frames of these events; false when the client's socket is full. */
    const deliver = (events: SseEvent[]): boolean => {
      if (events.length === 0) return true;
      const frames: ClientFrame[] = [];
      for (const event of events) for (const frame of translator.push(event)) frames.push(frame);
      if (frames.length === 0) return true;
      const text = encode(frames, scrubber);
      if (raw.destroyed || signal.aborted) throw new Error("client gone");
      if (!raw.headersSent) options.open();
      if (uncorkAfterTurn === null) {
        raw.cork();
        uncorkAfterTurn = setImmediate(uncork);
      }
      if (raw.write(text)) return true;
      // Corked, the turn's frames are past the buffer's mark (a large frame alone can be): they go
      // now instead of at the end of the turn, and the upstream pauses only if the socket could not
      // take them. Pausing for every such write made a 48 MiB stream ~20 times slower: each resume
      // waited for the upstream's TCP window to open again.
      clearImmediate(uncorkAfterTurn);
      uncork();
      const socket = raw.socket;
      return socket !== null && socket.writableLength < socket.writableHighWaterMark;
    };
    const onData = (chunk: Buffer) => {
      try {
        const room = deliver(parser.push(chunk));
        if (options.limitReached?.()) return finish({ end: "limit_reached" });
        if (!room) {
          body.pause();
          raw.once("drain", onDrain);
        }
      } catch (error) {
        fail(error);
      }
    };
    const onDrain = () => body.resume();
    const onEnd = () => {
      try {
        deliver(parser.end());
        finish({ end: "completed" });
      } catch (error) {
        fail(error);
      }
    };
    const onError = (error: Error) => fail(error);
    const onAbort = () => finish({ end: "client_aborted" });

    if (signal.aborted) return finish({ end: "client_aborted" });
    signal.once("abort", onAbort);
    if (options.firstChunk === null) return onEnd(); // the upstream body ended before any byte
    let full: boolean;
    try {
      full = !deliver(parser.push(options.firstChunk));
    } catch (error) {
      return fail(error);
    }
    if (options.limitReached?.()) return finish({ end: "limit_reached" });
    // The body may have ended already (everything came in the first read): its 'end' was emitted
    // while nobody listened, so it is not waited for. Or it failed meanwhile (readFirstChunk keeps a
    // listener so that such an error cannot go unhandled): that is an upstream failure.
    if (body.readableEnded) return onEnd();
    if (body.destroyed) return fail(body.errored ?? new Error("the upstream stream closed"));
    body.pause(); // explicitly, so that adding the 'data' listener does not start the flow by itself
    body.on("data", onData);
    body.on("end", onEnd);
    body.on("error", onError);
    if (full) raw.once("drain", onDrain);
    else body.resume();
  });
}

function ignoreLateErrors(): void {}

/**
 * The first chunk of a body (whatever it has buffered), read without switching it to flowing mode,
 * so that pumpStream can take over with 'data' events; null when the body ends without one.
 */
export function readFirstChunk(body: Readable): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      body.off("readable", onReadable);
      body.off("end", onEnd);
      body.off("error", onError);
    };
    const onReadable = () => {
      const chunk = body.read() as Buffer | null;
      if (chunk === null) return;
      cleanup();
      // Before pumpStream listens and after it is done (an abort can still error the body), an error
      // must not be an unhandled 'error' event, which would end the process; pumpStream finds a body
      // that failed before it started destroyed and reports it.
      body.on("error", ignoreLateErrors);
      resolve(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(null);
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    body.on("readable", onReadable);
    body.once("end", onEnd);
    body.once("error", onError);
  });
}
