// Changing a key's caps: one transaction that updates the key, recomputes exhaustion against the new
// caps, and records the allocation in key_allocations. This is how an exhausted key regains capacity
// (the enable route refuses exhausted keys, per the contract). Authorisation (is the actor allowed to manage
// this key?) is the calling route's job.
import { sql, type Kysely } from "kysely";
import type { Nano } from "../core/money.js";
import { GatewayError } from "../errors/catalogue.js";
import { recordAllocation, toApiKey, type ApiKey } from "../store/keys-store.js";
import type { Database, KeyStatus } from "../store/tables.js";
import { transact } from "../store/transact.js";

export interface KeyCapsChange {
  /** New spend cap; null removes it; undefined leaves it unchanged. */
  budgetCap?: Nano | null;
  /** New token cap (input plus output tokens); null removes it; undefined leaves it unchanged. */
  tokenCap?: number | null;
}

export async function setKeyCaps(db: Kysely<Database>, keyId: string, caps: KeyCapsChange, actorAccountId: string | null, now: number): Promise<ApiKey> {
  if (caps.budgetCap != null && caps.budgetCap < 0n) throw new GatewayError("invalid_request", "budget_cap_usd must not be negative", { param: "budget_cap_usd" });
  if (caps.tokenCap != null && (!Number.isSafeInteger(caps.tokenCap) || caps.tokenCap < 0)) {
    throw new GatewayError("invalid_request", "token_cap must be a non-negative integer", { param: "token_cap" });
  }
  return transact(db, async (trx) => {
    const current = await trx.selectFrom("keys").select(["status", "budget_cap_nano", "token_cap"]).where("id", "=", keyId).executeTakeFirst();
    if (!current) throw new GatewayError("not_found", `no key ${keyId}`);
    if (current.status === "revoked") throw new GatewayError("invalid_state", "a revoked key's caps cannot be changed");
    const budgetCap = caps.budgetCap === undefined ? current.budget_cap_nano : caps.budgetCap;
    const tokenCap = caps.tokenCap === undefined ? current.token_cap : caps.tokenCap === null ? null : BigInt(caps.tokenCap);

    const limits = [...(budgetCap === null ? [] : [sql<boolean>`spent_nano >= ${budgetCap}`]), ...(tokenCap === null ? [] : [sql<boolean>`tokens_used >= ${tokenCap}`])];
    const reached = limits.length === 0 ? sql<boolean>`1 = 0` : sql<boolean>`(${sql.join(limits, sql` or `)})`;
    // Exhaustion is judged on settled spend only (not holds), exactly as settlement judges it.
    // The status guard in WHERE keeps a concurrent revoke from being undone.
    const row = await trx
      .updateTable("keys")
      .set({
        budget_cap_nano: budgetCap,
        token_cap: tokenCap,
        status: sql<KeyStatus>`case when ${reached} then 'exhausted' else 'enabled' end`,
        updated_at: BigInt(now),
      })
      .where("id", "=", keyId)
      .where("status", "!=", "revoked")
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new GatewayError("invalid_state", "a revoked key's caps cannot be changed");

    await recordAllocation(trx, row, "caps_changed", actorAccountId);
    return toApiKey(row);
  });
}
