// Redemption code text: "MGW-" and 25 Crockford base32 characters in five groups of five
// (125 random bits), e.g. MGW-7K2QD-0X9FH-M3T8B-RZ4WA-1CNEV. Crockford's alphabet has no I, L, O or
// U, so a code read aloud or typed by hand survives: input is upper-cased, spaces and dashes are
// dropped, O reads as 0 and I or L as 1. Only the SHA-256 of the normalised text is stored; a code
// this random needs no slow hash (like API keys, src/core/api-keys.ts).
import { hash, randomBytes } from "node:crypto";

export const REDEMPTION_CODE_PREFIX = "MGW";
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const RANDOM_CHARS = 25;
const GROUP = 5;
/** The longest input worth normalising (a code with generous spacing); longer is refused unread. */
export const MAX_CODE_INPUT = 80;

export interface MintedCode {
  raw: string;
  /** What lists show: the prefix and the first group. */
  display: string;
  hash: string;
}

export function mintRedemptionCode(): MintedCode {
  const bytes = randomBytes(RANDOM_CHARS);
  // The low 5 bits of each byte: uniform over the 32 letters.
  const body = Array.from(bytes, (b) => ALPHABET[b & 31]!).join("");
  const groups = body.match(new RegExp(`.{${GROUP}}`, "g"))!;
  const raw = [REDEMPTION_CODE_PREFIX, ...groups].join("-");
  return { raw, display: `${REDEMPTION_CODE_PREFIX}-${groups[0]}-…`, hash: hashNormalisedCode(body) };
}

/** The 25 code characters of typed input, or null when it cannot be a code. */
export function normaliseRedemptionCode(input: string): string | null {
  if (input.length > MAX_CODE_INPUT) return null;
  let text = input.toUpperCase().replace(/[\s-]/g, "");
  if (text.startsWith(REDEMPTION_CODE_PREFIX) && text.length === REDEMPTION_CODE_PREFIX.length + RANDOM_CHARS) text = text.slice(REDEMPTION_CODE_PREFIX.length);
  text = text.replace(/O/g, "0").replace(/[IL]/g, "1");
  if (text.length !== RANDOM_CHARS) return null;
  for (const c of text) if (!ALPHABET.includes(c)) return null;
  return text;
}

/** The stored hash of typed input; null when it cannot be a code. */
export function hashRedemptionCode(input: string): string | null {
  const body = normaliseRedemptionCode(input);
  return body === null ? null : hashNormalisedCode(body);
}

function hashNormalisedCode(body: string): string {
  return hash("sha256", `${REDEMPTION_CODE_PREFIX}-${body}`, "hex");
}
