import { subjectLimitsSchema, type SubjectLimitsInput } from "../../core/traffic-limits.js";
import { MAX_BALANCE, parseUsd, type Nano } from "../../core/money.js";
import { GatewayError } from "../../errors/catalogue.js";
import type { Store } from "../../store/index.js";
import { UsageError } from "../io.js";

/** A USD option as exact nano-USD; null when absent. Label names the option in the message. */
export function parseMoneyOption(values: Record<string, string | boolean | undefined>, name: string, label = `--${name}`): Nano | null {
  const text = values[name];
  if (text === undefined) return null;
  if (typeof text !== "string") throw new UsageError(`${label} needs a value`);
  const nano = parseUsd(text);
  if (nano === null || nano < 0n) throw new UsageError(`${label}: "${text}" is not a non-negative USD amount with at most 9 decimals`);
  if (nano > MAX_BALANCE * 1000n) throw new UsageError(`${label}: "${text}" is too large`);
  return nano;
}

export function parseCountOption(values: Record<string, string | boolean | undefined>, name: string): number | null {
  const text = values[name];
  if (text === undefined) return null;
  if (typeof text !== "string" || !/^\d{1,15}$/.test(text)) throw new UsageError(`--${name}: "${String(text)}" is not a whole number`);
  return Number(text);
}

/** An on|off option or argument as a flag; undefined when absent. Label names it in the message. */
export function parseOnOff(text: string | boolean | undefined, label: string): boolean | undefined {
  if (text === undefined) return undefined;
  if (text === "on") return true;
  if (text === "off") return false;
  throw new UsageError(`${label} must be on or off, not "${String(text)}"`);
}

/**
 * Rate and concurrency limits as JSON (docs/configuration.md, "Rate and concurrency limits"), e.g.
 * '{"requests_per_minute":60,"models":{"gpt-4o":{"tokens_per_minute":100000}}}'; "none" removes them.
 */
export function parseLimits(text: string | boolean | undefined, label: string): SubjectLimitsInput | null | undefined {
  if (text === undefined) return undefined;
  if (typeof text !== "string") throw new UsageError(`${label} needs a value`);
  if (text === "none") return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`${label} must be JSON such as '{"requests_per_minute":60}', or none`);
  }
  const result = subjectLimitsSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new UsageError(`${label}: ${issue.path.join(".") || "value"}: ${issue.message}`);
  }
  return result.data;
}

/** A listing for an unknown account is a typo, not an empty list. */
export async function requireAccount(store: Store, accountId: string): Promise<void> {
  if (!(await store.accounts.get(accountId))) throw new GatewayError("account_not_found", `no account ${accountId}`);
}
