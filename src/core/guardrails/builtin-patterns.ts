// The built-in guardrail patterns (docs/configuration.md, "Guardrails"): credentials of the major
// providers and personal data. Each is written in the syntax RE2 and JavaScript share, has a
// longest match (`maxLength`, which sizes a stream's holdback window) and, where a shape alone
// would catch ordinary numbers, a checksum (`valid`: Luhn for cards, mod-97 for IBANs).

export interface BuiltinPattern {
  id: string;
  source: string;
  maxLength: number;
  /** A checksum or count the matched text must also pass; absent: every match counts. */
  valid?: (match: string) => boolean;
}

function digitsOf(text: string): string {
  return text.replace(/[^0-9]/g, "");
}

/** Luhn's checksum over the digits (card numbers). */
export function luhnValid(text: string): boolean {
  const digits = digitsOf(text);
  if (digits.length < 13 || digits.length > 19) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** ISO 13616 mod-97: the country code and check digits moved to the end, letters as 10..35. */
export function ibanValid(text: string): boolean {
  const iban = text.replace(/ /g, "");
  if (iban.length < 15 || iban.length > 34) return false;
  const moved = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const ch of moved) {
    const code = ch.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : ch;
    for (const digit of value) remainder = (remainder * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return remainder === 1;
}

/** E.164 allows 15 digits; 8 at least keeps dates, versions and short codes out. */
function phoneValid(text: string): boolean {
  const count = digitsOf(text).length;
  return count >= 8 && count <= 15;
}

export const BUILTIN_PATTERNS: readonly BuiltinPattern[] = [
  // Before openai_key: the same span matches both, and the first listed names it.
  { id: "anthropic_key", source: "\\bsk-ant-[A-Za-z0-9_-]{20,200}", maxLength: 207 },
  { id: "openai_key", source: "\\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,200}", maxLength: 211 },
  { id: "aws_access_key", source: "\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b", maxLength: 20 },
  { id: "google_api_key", source: "\\bAIza[0-9A-Za-z_-]{35}", maxLength: 39 },
  { id: "github_token", source: "\\b(?:gh[pousr]_[A-Za-z0-9]{36,200}|github_pat_[A-Za-z0-9_]{22,200})", maxLength: 211 },
  { id: "slack_token", source: "\\bxox[abposr]-[A-Za-z0-9-]{10,200}", maxLength: 205 },
  { id: "stripe_key", source: "\\b[rs]k_(?:live|test)_[A-Za-z0-9]{20,200}", maxLength: 208 },
  // The header is enough to know; the body and footer are taken when they are there (a buffered text).
  {
    id: "private_key",
    source: "-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----(?:[A-Za-z0-9+/=:,\\s-]{0,8000}?-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----)?",
    maxLength: 8_120,
  },
  { id: "credit_card", source: "\\b(?:[0-9][ -]?){12,18}[0-9]\\b", maxLength: 37, valid: luhnValid },
  {
    id: "email",
    source: "\\b[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\\.[A-Za-z0-9-]{1,63}){0,6}\\.[A-Za-z]{2,24}\\b",
    maxLength: 254,
  },
  // Conservative: an international number with its "+", so that amounts, ids and dates stay.
  { id: "phone", source: "\\+[1-9](?:[ .()-]{0,2}[0-9]){7,14}\\b", maxLength: 45, valid: phoneValid },
  { id: "iban", source: "\\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30}\\b", maxLength: 64, valid: ibanValid },
];

/** Names for several patterns at once, in a guardrail's `patterns` list. */
export const PATTERN_GROUPS: Readonly<Record<string, readonly string[]>> = {
  secrets: ["anthropic_key", "openai_key", "aws_access_key", "google_api_key", "github_token", "slack_token", "stripe_key", "private_key"],
  personal_data: ["credit_card", "email", "phone", "iban"],
};
