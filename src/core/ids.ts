import { randomBytes } from "node:crypto";

/** A random identifier with a type prefix, e.g. "acct_Xb3k..."; 96 bits of randomness. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString("base64url")}`;
}

export function nowMs(): bigint {
  return BigInt(Date.now());
}

/** The UTC calendar month of a timestamp, "YYYY-MM": the unit of monthly budgets. */
export function monthOf(ms: number | bigint): string {
  return new Date(Number(ms)).toISOString().slice(0, 7);
}
