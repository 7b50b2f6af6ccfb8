// Scrubbing a JSON body that carries large base64 payloads (generated images) without turning each
// payload into a JS string, parsing it, and serialising it again.
//
// The body is split once: every long string value made only of base64 characters is a payload,
// cut out and replaced by a short marker; the rest (the "skeleton", a few hundred bytes) is parsed
// and scrubbed with the ordinary scrubber. Each payload is checked by running the same scrubber
// over it in bounded, overlapping windows: if no window changes, the payload goes out as the very
// bytes the upstream sent (a Buffer slice, no copy). If a window does change, the whole payload
// is scrubbed as a string, exactly as scrubJson would have done; that breaks the image, which is
// right: it held a credential or host. A window that starts mid-payload can report a false
// positive (rules look at the character before a match); the full-string pass then decides.
import { randomBytes } from "node:crypto";
import type { Scrubber } from "../../pipeline/scrub.js";

/** Shorter strings are ordinary JSON text; cutting them out would gain nothing. */
const MIN_PAYLOAD_BYTES = 1_024;
const WINDOW = 256 * 1024;
/** Longer than any credential or host a rule matches, so a match across a window edge is seen whole. */
const OVERLAP = 4_096;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export interface ScrubbedBody {
  /** The scrubbed document with markers in place of payloads: for reading usage and counts. */
  json: unknown;
  /** The scrubbed body to send, in order. */
  parts: Buffer[];
  length: number;
  /**
   * Where the charged cost goes (withCost): the text part holding the placeholder put in the body's
   * usage object as its `cost`; null when the body has no usage object.
   */
  costSlot: { part: number; placeholder: string } | null;
}

interface Range {
  start: number;
  end: number;
}

/**
 * Throws SyntaxError when the body is not JSON; any scrubber failure propagates (caller: internal_error).
 * `edit` may change the skeleton before it is scrubbed (a route renaming the upstream's model).
 */
export function scrubJsonWithPayloads(body: Buffer, scrubber: Scrubber, edit: (skeleton: unknown) => unknown = (skeleton) => skeleton): ScrubbedBody {
  const payloads = findPayloads(body);
  const nonce = randomBytes(8).toString("hex");
  const marker = (i: number) => `gwb64${nonce}n${i}x`;

  const skeletonParts: Buffer[] = [];
  let last = 0;
  payloads.forEach((p, i) => {
    skeletonParts.push(body.subarray(last, p.start), Buffer.from(marker(i)));
    last = p.end;
  });
  skeletonParts.push(body.subarray(last));
  const parsed: unknown = JSON.parse(Buffer.concat(skeletonParts).toString("utf8"));
  // The cost is known only after settlement: a placeholder holds its place in the usage object.
  const placeholder = JSON.stringify(`gwcost${nonce}x`);
  const text = JSON.stringify(scrubber.scrubJson(withCostPlaceholder(edit(parsed), placeholder)));

  const parts: Buffer[] = [];
  const textParts: number[] = [];
  const pattern = new RegExp(`gwb64${nonce}n(\\d+)x`, "g");
  let from = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const payload = payloads[Number(match[1])];
    if (!payload) throw new Error("unknown payload marker");
    textParts.push(parts.length);
    parts.push(Buffer.from(text.slice(from, match.index)), scrubPayload(body, payload, scrubber));
    from = match.index + match[0].length;
  }
  textParts.push(parts.length);
  parts.push(Buffer.from(text.slice(from)));
  const costPart = textParts.find((i) => parts[i]!.includes(placeholder));
  return { json: parsed, parts, length: parts.reduce((n, part) => n + part.length, 0), costSlot: costPart === undefined ? null : { part: costPart, placeholder } };
}

function withCostPlaceholder(skeleton: unknown, placeholder: string): unknown {
  if (typeof skeleton !== "object" || skeleton === null || Array.isArray(skeleton)) return skeleton;
  const usage = (skeleton as { usage?: unknown }).usage;
  if (typeof usage !== "object" || usage === null || Array.isArray(usage)) return skeleton;
  return { ...skeleton, usage: { ...usage, cost: JSON.parse(placeholder) as string } };
}

/** The body's parts with the charged cost (formatUsd text) in its usage object, when it has one. */
export function withCost(scrubbed: ScrubbedBody, cost: string): { parts: Buffer[]; length: number } {
  const slot = scrubbed.costSlot;
  if (slot === null) return scrubbed;
  const parts = [...scrubbed.parts];
  const before = parts[slot.part]!;
  parts[slot.part] = Buffer.from(before.toString("utf8").replace(slot.placeholder, JSON.stringify(cost)));
  return { parts, length: scrubbed.length - before.length + parts[slot.part]!.length };
}

/** The contents (between the quotes) of every long, base64-only JSON string in the body. */
function findPayloads(body: Buffer): Range[] {
  const found: Range[] = [];
  let pos = 0;
  for (;;) {
    const open = body.indexOf(QUOTE, pos);
    if (open < 0) return found;
    const close = closingQuote(body, open + 1);
    if (close < 0) return found; // unterminated: JSON.parse of the skeleton reports it
    if (close - open - 1 >= MIN_PAYLOAD_BYTES && isBase64(body, open + 1, close)) found.push({ start: open + 1, end: close });
    pos = close + 1;
  }
}

function closingQuote(body: Buffer, from: number): number {
  let at = from;
  for (;;) {
    const quote = body.indexOf(QUOTE, at);
    if (quote < 0) return -1;
    let slashes = 0;
    while (quote - 1 - slashes >= from && body[quote - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return quote;
    at = quote + 1;
  }
}

function isBase64(body: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = body[i]!;
    const ok = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2f || c === 0x3d;
    if (!ok) return false;
  }
  return true;
}

function scrubPayload(body: Buffer, range: Range, scrubber: Scrubber): Buffer {
  for (let start = range.start; start < range.end; start += WINDOW - OVERLAP) {
    const end = Math.min(range.end, start + WINDOW);
    const window = body.toString("latin1", start, end);
    if (scrubber.scrubText(window) !== window) {
      const whole = body.toString("latin1", range.start, range.end);
      // Through JSON.stringify so the result is a valid string body whatever the scrubber inserted.
      return Buffer.from(JSON.stringify(scrubber.scrubText(whole)).slice(1, -1), "utf8");
    }
    if (end === range.end) break;
  }
  return body.subarray(range.start, range.end);
}
