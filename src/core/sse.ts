// Server-sent events at the byte edge: an incremental parser (WHATWG HTML §9.2 rules) and a
// frame encoder. Owns framing only; payload JSON belongs to the format layer.

export interface SseEvent {
  event?: string;
  data: string;
  /** The `id:` field of this event only (not the sticky last-event-id of EventSource). */
  id?: string;
}

export interface SseParserOptions {
  /** Largest event accepted, counted as the raw bytes of its lines; default 8 MiB. */
  maxEventBytes?: number;
}

export const DEFAULT_MAX_EVENT_BYTES = 8 * 1024 * 1024;

/** One event (or one unterminated line) grew past the limit; the stream should be aborted. */
export class SseFrameTooLargeError extends Error {
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`SSE event exceeds ${maxBytes} bytes`);
    this.name = "SseFrameTooLargeError";
    this.maxBytes = maxBytes;
  }
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;

/**
 * A line's field value as text. Buffer's own UTF-8 slice, not a TextDecoder over a subarray: no view
 * object per line. Invalid sequences become U+FFFD, as with TextDecoder; a U+FEFF is kept as data (the
 * stream's leading BOM is stripped by hand). Each call gets one whole line, and lines never split a
 * UTF-8 sequence (CR/LF are ASCII).
 */
function decodeUtf8(bytes: Buffer, start: number, end: number): string {
  return start < end ? bytes.toString("utf8", start, end) : "";
}

/**
 * Feed network chunks with push(); it returns the events completed by that chunk.
 * Each byte is scanned once: unterminated line bytes are kept as pieces and joined once when the
 * line ends, and only the current event is held, so memory is bounded by maxEventBytes.
 * After SseFrameTooLargeError the parser stays failed: push() rethrows until end() resets it.
 */
export class SseParser {
  private readonly maxEventBytes: number;
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private skipLf = false;
  private atStreamStart = true;
  private data: string[] = [];
  private eventType = "";
  private id: string | undefined;
  private eventBytes = 0;
  private failure: SseFrameTooLargeError | null = null;

  constructor(options: SseParserOptions = {}) {
    this.maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
  }

  push(input: Uint8Array): SseEvent[] {
    if (this.failure) throw this.failure;
    // Network chunks are Buffers already; anything else is viewed as one (no copy).
    const chunk = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    const out: SseEvent[] = [];
    const len = chunk.length;
    let pos = 0;
    if (this.skipLf && len > 0) {
      // The previous chunk ended in CR: an LF here completes that CRLF, not a second line end.
      if (chunk[0] === LF) pos = 1;
      this.skipLf = false;
    }
    let lf = chunk.indexOf(LF, pos);
    let cr = chunk.indexOf(CR, pos);
    while (lf !== -1 || cr !== -1) {
      let end: number;
      let next: number;
      if (cr === -1 || (lf !== -1 && lf < cr)) {
        end = lf;
        next = lf + 1;
      } else {
        end = cr;
        if (cr + 1 < len) next = chunk[cr + 1] === LF ? cr + 2 : cr + 1;
        else {
          next = len;
          this.skipLf = true;
        }
      }
      this.completeLine(chunk, pos, end, out);
      pos = next;
      if (lf !== -1 && lf < next) lf = chunk.indexOf(LF, next);
      if (cr !== -1 && cr < next) cr = chunk.indexOf(CR, next);
    }
    if (pos < len) {
      // Copy: the caller may reuse its buffer after push() returns.
      this.partial.push(Buffer.copyBytesFrom(chunk, pos));
      this.partialBytes += len - pos;
      this.guard(this.eventBytes + this.partialBytes);
    }
    return out;
  }

  /**
   * End of stream. A trailing event without its blank line is dropped, as WHATWG parsers and the
   * OpenAI/Anthropic SDKs do, so this returns no events; it resets the parser for reuse.
   */
  end(): SseEvent[] {
    this.partial = [];
    this.partialBytes = 0;
    this.skipLf = false;
    this.atStreamStart = true;
    this.resetEvent();
    this.failure = null;
    return [];
  }

  private completeLine(chunk: Buffer, start: number, end: number, out: SseEvent[]): void {
    let bytes = chunk;
    let s = start;
    let e = end;
    if (this.partialBytes > 0) {
      bytes = joinPieces(this.partial, this.partialBytes, chunk.subarray(start, end));
      s = 0;
      e = bytes.length;
      this.partial = [];
      this.partialBytes = 0;
    }
    if (this.atStreamStart) {
      this.atStreamStart = false;
      if (e - s >= 3 && bytes[s] === 0xef && bytes[s + 1] === 0xbb && bytes[s + 2] === 0xbf) s += 3;
    }
    if (s === e) return this.dispatch(out);
    if (bytes[s] === COLON) return; // comment (keepalive)

    this.eventBytes += e - s;
    this.guard(this.eventBytes);

    // Manual scan bounded by the line: indexOf could run far past a colon-less line.
    let colon = s;
    while (colon < e && bytes[colon] !== COLON) colon++;
    let valueStart = colon + 1;
    if (valueStart < e && bytes[valueStart] === SPACE) valueStart++;
    const nameLength = colon - s;
    if (nameLength === 4 && isName(bytes, s, DATA)) {
      this.data.push(decodeUtf8(bytes, valueStart, e));
    } else if (nameLength === 5 && isName(bytes, s, EVENT)) {
      this.eventType = decodeUtf8(bytes, valueStart, e);
    } else if (nameLength === 2 && isName(bytes, s, ID)) {
      const value = decodeUtf8(bytes, valueStart, e);
      if (!value.includes("\0")) this.id = value; // WHATWG: an id containing NULL is ignored
    }
    // `retry` and unknown fields are ignored: the gateway never reconnects on the client's behalf.
  }

  private dispatch(out: SseEvent[]): void {
    if (this.data.length > 0) {
      const event: SseEvent = { data: this.data.length === 1 ? this.data[0]! : this.data.join("\n") };
      if (this.eventType !== "") event.event = this.eventType;
      if (this.id !== undefined) event.id = this.id;
      out.push(event);
    }
    this.resetEvent();
  }

  private resetEvent(): void {
    this.data = [];
    this.eventType = "";
    this.id = undefined;
    this.eventBytes = 0;
  }

  private guard(bytes: number): void {
    if (bytes <= this.maxEventBytes) return;
    this.failure = new SseFrameTooLargeError(this.maxEventBytes);
    this.partial = [];
    this.partialBytes = 0;
    this.resetEvent();
    throw this.failure;
  }
}

const DATA = [0x64, 0x61, 0x74, 0x61];
const EVENT = [0x65, 0x76, 0x65, 0x6e, 0x74];
const ID = [0x69, 0x64];

function isName(bytes: Uint8Array, at: number, name: readonly number[]): boolean {
  for (let i = 0; i < name.length; i++) if (bytes[at + i] !== name[i]) return false;
  return true;
}

function joinPieces(pieces: readonly Buffer[], piecesBytes: number, tail: Buffer): Buffer {
  const joined = Buffer.allocUnsafe(piecesBytes + tail.length);
  let offset = 0;
  for (const piece of pieces) {
    joined.set(piece, offset);
    offset += piece.length;
  }
  joined.set(tail, offset);
  return joined;
}

const LINE_BREAK = /\r\n|\r|\n/;

/**
 * One whole frame, to be written in a single write(). Data with line breaks becomes several
 * `data:` lines (readers join them back with "\n"); JSON.stringify output takes the fast path.
 */
export function encodeSseEvent(data: string, event?: string): string {
  let head = "";
  if (event !== undefined && event !== "") {
    // A line break in the name would inject fields into the stream: a programming error.
    if (LINE_BREAK.test(event)) throw new TypeError("SSE event name must not contain line breaks");
    head = `event: ${event}\n`;
  }
  if (!LINE_BREAK.test(data)) return `${head}data: ${data}\n\n`;
  return `${head}data: ${data.split(LINE_BREAK).join("\ndata: ")}\n\n`;
}
