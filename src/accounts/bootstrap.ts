// First start on an empty database: an administrator account with a one-time password and a
// first API key, printed once so a new operator can sign in and make a call straight away.
import { randomBytes } from "node:crypto";
import type { GatewayConfig } from "../config/load.js";
import type { Store } from "../store/index.js";
import { hashPassword } from "./passwords.js";

export interface BootstrapResult {
  email: string;
  password: string;
  accountId: string;
  apiKey: string;
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
  return { email, password, accountId: account.id, apiKey: raw };
}
