// The binary AWS event stream (application/vnd.amazon.eventstream) of ConverseStream, as events:
// the `:event-type` header is the event's name and the JSON payload its data. Messages arrive split
// anywhere across chunks, so bytes are held until a whole message (its prelude names the length) is
// in; the SDK's codec then checks both CRCs and parses the headers. An exception or error message
// (`:message-type` other than "event") fails the stream like a broken frame. The codec is loaded
// with the first decoder (sdk.ts).
import type { EventStreamCodec, Message } from "@smithy/eventstream-codec";
import type { SseEvent } from "../../core/sse.js";
import { DEFAULT_MAX_EVENT_BYTES } from "../../core/sse.js";
import { UpstreamProtocolError } from "../usage-readers.js";
import type { StreamDecoder } from "../descriptor.js";
import { codecSdk } from "./sdk.js";

/** Total length, headers length, prelude CRC. */
const PRELUDE_BYTES = 12;
/** Prelude and message CRC: the smallest message. */
const MIN_MESSAGE_BYTES = 16;

export class UpstreamStreamException extends UpstreamProtocolError {
  override name = "UpstreamStreamException";
}

export class EventStreamDecoder implements StreamDecoder {
  private readonly codec: EventStreamCodec;
  private readonly toUtf8: (bytes: Uint8Array) => string;
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxMessageBytes = DEFAULT_MAX_EVENT_BYTES) {
    const { EventStreamCodec, fromUtf8, toUtf8 } = codecSdk();
    this.codec = new EventStreamCodec(toUtf8, fromUtf8);
    this.toUtf8 = toUtf8;
  }

  push(chunk: Uint8Array): SseEvent[] {
    this.pending.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    this.pendingBytes += chunk.byteLength;
    const events: SseEvent[] = [];
    while (this.pendingBytes >= PRELUDE_BYTES) {
      if (this.pending[0]!.byteLength < 4) this.pending = [Buffer.concat(this.pending, this.pendingBytes)];
      const length = this.pending[0]!.readUInt32BE(0);
      if (length < MIN_MESSAGE_BYTES || length > this.maxMessageBytes) throw new UpstreamProtocolError(`the upstream sent an event stream message of ${length} bytes`);
      // Pieces are joined once the whole message is in, not on every chunk: a large message that
      // arrives in many small chunks is copied once.
      if (this.pendingBytes < length) break;
      const buffered = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
      events.push(this.toEvent(this.decode(buffered.subarray(0, length))));
      const rest = buffered.subarray(length);
      this.pending = rest.byteLength > 0 ? [rest] : [];
      this.pendingBytes = rest.byteLength;
    }
    return events;
  }

  end(): SseEvent[] {
    const left = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    if (left > 0) throw new UpstreamProtocolError("the upstream event stream ended inside a message");
    return [];
  }

  private decode(bytes: Uint8Array): Message {
    try {
      return this.codec.decode(bytes);
    } catch {
      throw new UpstreamProtocolError("the upstream sent a corrupt event stream message");
    }
  }

  private toEvent(message: Message): SseEvent {
    const header = (name: string): string | undefined => {
      const value = message.headers[name];
      return value?.type === "string" ? value.value : undefined;
    };
    const messageType = header(":message-type");
    if (messageType !== "event") {
      const kind = header(":exception-type") ?? header(":error-code") ?? "error";
      // The upstream's message stays out of it: it can name the account or the request.
      throw new UpstreamStreamException(`the upstream stream failed: ${kind}`);
    }
    return { event: header(":event-type") ?? "", data: this.toUtf8(message.body) };
  }
}

export function eventStreamDecoder(): StreamDecoder {
  return new EventStreamDecoder();
}
