// How the dashboard writes numbers, dates and money: one function each, used by every page, so the
// same amount reads the same everywhere (docs/dashboard.md, "Money and numbers").

/** Decimals every amount of money is shown with: prices per million tokens, balances and per-request costs alike. */
export const MONEY_DECIMALS = 4;

const MONEY_PATTERN = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * A decimal USD string from the API ("1234.5", "-0.0018", "0.000012") as "$1,234.5000": always
 * MONEY_DECIMALS decimals, thousands grouped, rounded half away from zero on the digits themselves
 * (never through a float). An amount that is not zero but rounds to zero reads "<$0.0001" (or
 * "-<$0.0001"), never "$0.0000"; moneyExact gives the exact amount for a tooltip.
 */
export function formatMoney(usd: string): string {
  const match = MONEY_PATTERN.exec(usd.trim());
  if (!match) return usd;
  const [, sign = "", whole = "0", fraction = ""] = match;
  let digits = BigInt(whole + fraction.padEnd(MONEY_DECIMALS, "0").slice(0, MONEY_DECIMALS));
  const rest = fraction.slice(MONEY_DECIMALS);
  if (rest !== "" && rest[0]! >= "5") digits += 1n;
  const text = digits.toString().padStart(MONEY_DECIMALS + 1, "0");
  const units = text.slice(0, -MONEY_DECIMALS).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const cents = text.slice(-MONEY_DECIMALS);
  if (digits === 0n) {
    const nonZero = /[1-9]/.test(whole + fraction);
    return nonZero ? `${sign}<$0.${"0".repeat(MONEY_DECIMALS - 1)}1` : `$0.${"0".repeat(MONEY_DECIMALS)}`;
  }
  return `${sign}$${units}.${cents}`;
}

/** The exact amount as the API gave it, "$0.000012345", for a title beside the rounded one. */
export function moneyExact(usd: string): string {
  const match = MONEY_PATTERN.exec(usd.trim());
  if (!match) return usd;
  const [, sign = "", whole = "0", fraction = ""] = match;
  const grouped = BigInt(whole)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const kept = fraction.replace(/0+$/, "").padEnd(2, "0");
  return `${sign}$${grouped}.${kept}`;
}

/** Whether formatMoney rounds digits away from this amount (the page then shows moneyExact in a tooltip). */
export function moneyHidesDigits(usd: string): boolean {
  const fraction = MONEY_PATTERN.exec(usd.trim())?.[3] ?? "";
  return /[1-9]/.test(fraction.slice(MONEY_DECIMALS));
}

/** The exact sum of decimal USD strings, as a decimal USD string (nano-USD digits, no float). */
export function sumMoney(amounts: readonly string[]): string {
  let nano = 0n;
  for (const usd of amounts) {
    const match = MONEY_PATTERN.exec(usd.trim());
    if (!match) continue;
    const [, sign = "", whole = "0", fraction = ""] = match;
    const value = BigInt(whole + fraction.padEnd(9, "0").slice(0, 9));
    nano += sign === "-" ? -value : value;
  }
  const negative = nano < 0n;
  const digits = (negative ? -nano : nano).toString().padStart(10, "0");
  return `${negative ? "-" : ""}${digits.slice(0, -9)}.${digits.slice(-9)}`;
}

export function formatDate(iso: string | null): string {
  return iso ? new Date(iso).toLocaleString() : "—";
}

const COUNT = new Intl.NumberFormat("en-US");

/** Counts (requests, tokens) the same way on every page: digits grouped by thousands. */
export function formatCount(n: number): string {
  return COUNT.format(n);
}
