// Money is nano-USD (1e-9 USD) held in a bigint: exact, and wide enough for total_spent's
// 999,999,999.99 USD ceiling (~1e18 nano). Decimal strings exist only at the edges.

export type Nano = bigint;

export const NANO_PER_USD = 1_000_000_000n;
export const MAX_BALANCE: Nano = 1_000_000n * NANO_PER_USD;
export const MAX_TOTAL_SPENT: Nano = 99_999_999_999n * 10_000_000n; // 999,999,999.99 USD

const DECIMAL = /^(-)?(\d{1,12})(?:\.(\d{1,9}))?$/;

/** Parses "12", "12.5", "0.000000001" exactly; null when the text is not a plain decimal. */
export function parseUsd(text: string | number): Nano | null {
  const source = typeof text === "number" ? numberToPlainDecimal(text) : text.trim();
  if (source === null) return null;
  const match = DECIMAL.exec(source);
  if (!match) return null;
  const [, sign, whole, fraction = ""] = match;
  const nano = BigInt(whole!) * NANO_PER_USD + BigInt(fraction.padEnd(9, "0"));
  return sign ? -nano : nano;
}

// YAML and JSON hand us numbers like 0.15; their shortest round-trip text is what the user wrote.
function numberToPlainDecimal(value: number): string | null {
  if (!Number.isFinite(value)) return null;
  const text = String(value);
  return /e/i.test(text) ? null : text;
}

/** Renders nano-USD as a decimal string with at least two decimals: 1.5 USD -> "1.50". */
export function formatUsd(nano: Nano): string {
  const negative = nano < 0n;
  const abs = negative ? -nano : nano;
  const whole = abs / NANO_PER_USD;
  let fraction = (abs % NANO_PER_USD).toString().padStart(9, "0").replace(/0+$/, "");
  if (fraction.length < 2) fraction = fraction.padEnd(2, "0");
  return `${negative ? "-" : ""}${whole}.${fraction}`;
}

/** Ceiling division for non-negative operands: a fraction of a nano is charged, never dropped. */
export function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator;
}
