// Header values made from text the gateway does not control (a client's tool type in a warning, a
// configured name): Node refuses a header with CR, LF or a non-Latin-1 character when it writes the
// response, after the request has been billed. Printable ASCII is kept; every other character,
// and "%", is written as the percent-encoding of its UTF-8 bytes, so a reader can decode it.
import { validateHeaderName, validateHeaderValue } from "node:http";

export const MAX_HEADER_VALUE = 2_000;

export function safeHeaderValue(text: string, max = MAX_HEADER_VALUE): string {
  let out = "";
  for (const char of text) {
    const code = char.codePointAt(0)!;
    const piece = code >= 0x20 && code <= 0x7e && char !== "%" ? char : percentEncoded(char);
    if (out.length + piece.length > max) break;
    out += piece;
  }
  return out;
}

function percentEncoded(char: string): string {
  // An unpaired surrogate encodes as U+FFFD's bytes: it is no character at all.
  let encoded = "";
  for (const byte of Buffer.from(char, "utf8")) encoded += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  return encoded;
}

/**
 * The names of the headers Node would refuse to write (an invalid name, or a value with CR, LF or a
 * character beyond Latin-1). Checked before a request is charged: every header the gateway makes is
 * made safe above, so a hit is a defect, and it must become an error the client sees uncharged
 * rather than a failure while writing the answer it paid for.
 */
export function unsendableHeaders(headers: Record<string, unknown>): string[] {
  const refused: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    try {
      validateHeaderName(name);
      for (const one of Array.isArray(value) ? value : [value]) validateHeaderValue(name, String(one));
    } catch {
      refused.push(name);
    }
  }
  return refused;
}
