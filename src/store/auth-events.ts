// A change that cached authentication must not outlive: every gateway process polls these rows
// (src/pipeline/auth-cache.ts) and drops the key, or all keys of the account, within a second.
import type { Kysely } from "kysely";
import { nowMs } from "../core/ids.js";
import type { Database } from "./tables.js";

export type AuthChange = { keyHash: string } | { accountId: string };

export async function recordAuthChange(db: Kysely<Database>, change: AuthChange): Promise<void> {
  await db
    .insertInto("auth_events")
    .values({
      key_hash: "keyHash" in change ? change.keyHash : null,
      account_id: "accountId" in change ? change.accountId : null,
      created_at: nowMs(),
    })
    .execute();
}
