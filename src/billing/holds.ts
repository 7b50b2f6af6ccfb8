// Releasing holds: a request that will not be settled (failure before any delivery), and holds left
// behind by a crashed gateway process once they expire. Deleting the hold row comes first and is the
// per-request mutex: whoever deletes it (release, sweeper or settlement) gives its reservation back,
// exactly once; the others find no row and change nothing.
import type { Kysely, Transaction } from "kysely";
import type { Database } from "../store/tables.js";

/** Deletes one hold and returns its reservation to the account and key. False when already gone. */
export async function releaseHold(trx: Transaction<Database>, holdId: string, expiredBefore?: number): Promise<boolean> {
  let query = trx.deleteFrom("holds").where("id", "=", holdId);
  // The sweeper re-checks expiry in the delete itself: a hold settled or released meanwhile is not touched.
  if (expiredBefore !== undefined) query = query.where("expires_at", "<=", BigInt(expiredBefore));
  const hold = await query.returning(["account_id", "key_id", "amount_nano", "tokens"]).executeTakeFirst();
  if (!hold) return false;
  await trx
    .updateTable("accounts")
    .set((eb) => ({ held_nano: eb("held_nano", "-", hold.amount_nano), held_tokens: eb("held_tokens", "-", hold.tokens) }))
    .where("id", "=", hold.account_id)
    .execute();
  if (hold.key_id !== null) {
    await trx
      .updateTable("keys")
      .set((eb) => ({ held_nano: eb("held_nano", "-", hold.amount_nano), held_tokens: eb("held_tokens", "-", hold.tokens) }))
      .where("id", "=", hold.key_id)
      .execute();
  }
  return true;
}

/**
 * Releases every hold whose expires_at has passed, one short transaction per hold so that the sweep
 * never holds many account locks at once. Uses the holds_expiry index. Returns how many it released.
 */
export async function releaseExpiredHolds(db: Kysely<Database>, now: number, batch = 500): Promise<number> {
  let released = 0;
  for (;;) {
    const expired = await db
      .selectFrom("holds")
      .select("id")
      .where("expires_at", "<=", BigInt(now))
      .orderBy("expires_at")
      .limit(batch)
      .execute();
    for (const { id } of expired) {
      if (await db.transaction().execute((trx) => releaseHold(trx, id, now))) released += 1;
    }
    if (expired.length < batch) return released;
  }
}
