// The `stripe` section (card top-ups; docs/configuration.md, "Card top-ups"; ADR 0039) as the gateway
// uses it: the keys read (from the file's ${VAR} substitution or from a secret file), the bounds as
// exact nano-USD in whole cents, and the API address (tests point it at a local mock).
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseUsd, type Nano } from "../core/money.js";
import type { StripeSettings } from "../billing/stripe-client.js";
import type { ConfigFile } from "./schema.js";

export type { StripeSettings };

const CENT: Nano = 10_000_000n;

/**
 * The settings, or null without a `stripe` section (top-ups off); a relative secret file is found from
 * `baseDir` (the config file's folder); `fail` names the field of the first error.
 */
export function stripeSettingsFrom(section: ConfigFile["stripe"], baseDir: string, fail: (field: string, message: string) => never): StripeSettings | null {
  if (!section) return null;
  const secretKey = secretOf(section.secret_key, section.secret_key_file && resolve(baseDir, section.secret_key_file), "stripe.secret_key", fail);
  const webhookSecret = secretOf(section.webhook_secret, section.webhook_secret_file && resolve(baseDir, section.webhook_secret_file), "stripe.webhook_secret", fail);
  const minTopup = amountOf(section.min_topup_usd, "stripe.min_topup_usd", fail);
  const maxTopup = amountOf(section.max_topup_usd, "stripe.max_topup_usd", fail);
  if (minTopup > maxTopup) fail("stripe.max_topup_usd", "must be at least min_topup_usd");
  let api: StripeSettings["api"] = null;
  if (section.api_base !== undefined) {
    const url = new URL(section.api_base);
    if (url.protocol !== "http:" && url.protocol !== "https:") fail("stripe.api_base", "must be an http(s) URL");
    if (url.pathname !== "/" || url.search || url.username) fail("stripe.api_base", "give the scheme, host and port only");
    const protocol = url.protocol === "https:" ? "https" : "http";
    api = { protocol, host: url.hostname, port: url.port ? Number(url.port) : protocol === "https" ? 443 : 80 };
  }
  return {
    secretKey,
    webhookSecret,
    currency: section.currency,
    minTopup,
    maxTopup,
    successUrl: section.success_url ?? null,
    cancelUrl: section.cancel_url ?? null,
    toleranceS: section.tolerance_s,
    api,
    timeoutMs: section.timeout_ms,
  };
}

function secretOf(inline: string | undefined, file: string | undefined, field: string, fail: (field: string, message: string) => never): string {
  if ((inline === undefined) === (file === undefined))
    return fail(field, `give ${field.split(".")[1]} (as \${AN_ENVIRONMENT_VARIABLE}) or ${field.split(".")[1]}_file, one of the two`);
  if (inline !== undefined) return inline;
  let text: string;
  try {
    text = readFileSync(file!, "utf8").trim();
  } catch (error) {
    return fail(`${field}_file`, `cannot be read: ${(error as Error).message.split("\n")[0]}`);
  }
  if (text === "") fail(`${field}_file`, "the file is empty");
  return text;
}

function amountOf(text: string, field: string, fail: (field: string, message: string) => never): Nano {
  const nano = parseUsd(text);
  if (nano === null || nano < 50n * CENT || nano > 999_999_99n * CENT) return fail(field, `"${text}" is not an amount in USD from 0.50 to 999999.99`);
  if (nano % CENT !== 0n) fail(field, "must be whole cents");
  return nano;
}
