// First start on an empty database: an administrator account with a one-time password and a
// first API key, printed once so a new operator can sign in and make a call straight away. With
// demo models in the catalog the account also gets a demo credit, so that first call is billed.
import { randomBytes } from "node:crypto";
import type { GatewayConfig } from "../config/load.js";
import { parseUsd, type Nano } from "../core/money.js";
import type { Store } from "../store/index.js";
import { DEMO_CREDIT_USD } from "../config/demo-catalog.js";
import { upstreamOf } from "../upstreams/registry.js";
import { hashPassword } from "./passwords.js";

/** The note of the first start's demo credit in the ledger. */
export const DEMO_CREDIT_NOTE = "demo credit";

export interface BootstrapResult {
  email: string;
  password: string;
  accountId: string;
  apiKey: string;
  /** The demo credit written to the ledger (null: the catalog has no demo models). */
  demoCredit: Nano | null;
  /** The demo chat models, in catalog order (empty without them). */
  demoModels: string[];
}

export async function bootstrapIfEmpty(store: Store, config: GatewayConfig): Promise<BootstrapResult | null> {
  if ((await store.accounts.count()) > 0) return null;
  const email = "admin@localhost";
  const password = randomBytes(12).toString("base64url");
  const account = await store.accounts.create({ email, tier: config.defaultTier, isAdmin: true, passwordHash: await hashPassword(password) }).catch(async (error: unknown) => {
    // Another process sharing the database bootstrapped first: it prints the banner, not us.
    if (await store.accounts.getByEmail(email)) return null;
    throw error;
  });
  if (!account) return null;
  const { raw } = await store.keys.create({ accountId: account.id, name: "first key" });
  const demoModels = [...config.models.values()].filter((m) => m.kind === "chat" && upstreamOf(m.provider).capabilities.demo).map((m) => m.id);
  let demoCredit: Nano | null = null;
  if (demoModels.length > 0) {
    // Through the administrator credit path: one transaction, a ledger row, the balance invariant.
    demoCredit = parseUsd(DEMO_CREDIT_USD)!;
    await store.accounts.adjustBalance(account.id, demoCredit, DEMO_CREDIT_NOTE);
  }
  return { email, password, accountId: account.id, apiKey: raw, demoCredit, demoModels };
}
