// Header values made from text the gateway does not control (a client's tool type in a warning, a
// configured name): Node refuses a header with CR, LF or a non-Latin-1 character when it writes the
// response, after the request has been billed. Printable ASCII is kept; every other character,
// and "%", is written as the percent-encoding of its UTF-8 bytes, so a reader can decode it.
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
