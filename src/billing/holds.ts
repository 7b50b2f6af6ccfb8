// Releasing holds: a request that will not be settled (failure before any delivery), and holds left
// behind by a crashed gateway process once they expire. Deleting the hold row comes first and is the
// per-request mutex: whoever deletes it (release, sweeper or settlement) gives its reservation back,
// and its concurrency slot (holds.traffic, traffic-limits.ts), exactly once; the others find no row
// and change nothing.
//
// SQLite: precompiled SQL in one operation of the write batcher (sqlite-writer.ts). PostgreSQL: one
// release operation of the PL/pgSQL function gw_batch, the same statements, sent in a
// group-commit batch (postgres-batcher.ts). The sweeper re-checks expiry in the delete itself on both: a hold settled or
// released meanwhile is not touched.
import type { Kysely } from "kysely";
import type { Database } from "../store/tables.js";
import type { PostgresBatcher } from "./postgres-batcher.js";
import { Statement, type SqlExec } from "../store/sqlite-writer.js";
import type { TrafficRecord } from "../core/traffic-limits.js";
import { trafficWindows } from "./traffic-windows-sqlite.js";
import { giveBackBudgetsSqlite, scopesOfColumn } from "./budgets-sqlite.js";

interface DeletedHold {
  account_id: string;
  key_id: string | null;
  amount_nano: bigint;
  tokens: bigint;
  traffic: string | null;
  budgets: string | null;
}

const DELETE_HOLD = new Statement<DeletedHold>(`delete from holds where id = ? returning account_id, key_id, amount_nano, tokens, traffic, budgets`);
const DELETE_EXPIRED_HOLD = new Statement<DeletedHold>(`delete from holds where id = ? and expires_at <= ? returning account_id, key_id, amount_nano, tokens, traffic, budgets`);
const GIVE_BACK_ACCOUNT = new Statement<never>(`update accounts set held_nano = held_nano - ?, held_tokens = held_tokens - ? where id = ?`);
const GIVE_BACK_KEY = new Statement<never>(`update keys set held_nano = held_nano - ?, held_tokens = held_tokens - ? where id = ?`);

/** Deletes one hold and returns its reservation to the account and key. False when already gone. */
export function releaseHoldSqlite(exec: SqlExec, holdId: string, expiredBefore?: number): boolean {
  const hold = expiredBefore === undefined ? DELETE_HOLD.first(exec, [holdId]) : DELETE_EXPIRED_HOLD.first(exec, [holdId, BigInt(expiredBefore)]);
  if (!hold) return false;
  GIVE_BACK_ACCOUNT.changes(exec, [hold.amount_nano, hold.tokens, hold.account_id]);
  if (hold.key_id !== null) GIVE_BACK_KEY.changes(exec, [hold.amount_nano, hold.tokens, hold.key_id]);
  giveBackBudgetsSqlite(exec, scopesOfColumn(hold.budgets), hold.amount_nano, hold.tokens);
  endTrafficSqlite(exec, hold.traffic, 0n);
  return true;
}

/**
 * Ends what an admission counted against the traffic limits (holds.traffic; null: nothing), called
 * by whoever deleted the hold: frees the concurrency slot of every scope and corrects the tokens to
 * `actualTokens` (0 for a release: nothing was delivered), while the window is still the one the
 * admission counted in.
 */
export function endTrafficSqlite(exec: SqlExec, traffic: string | null, actualTokens: bigint): void {
  if (traffic === null) return;
  const record = JSON.parse(traffic) as TrafficRecord;
  const delta = Number(actualTokens) - record.t;
  // In the transaction's traffic windows (traffic-windows-sqlite.ts), written once before COMMIT.
  const windows = trafficWindows(exec);
  for (const [scope, windowStart] of record.w) windows.end(exec, scope, windowStart, delta);
}

/** The same on PostgreSQL: one release operation of gw_batch, group-committed (postgres-batcher.ts). */
export async function releaseHoldPostgres(batcher: PostgresBatcher, accountId: string, holdId: string, expiredBefore?: number, budgets: readonly string[] = []): Promise<boolean> {
  // The hold's budget scopes, for gw_batch to lock before the account (budget-functions.ts); it gives back those of the deleted row.
  const answer = await batcher.call(
    { k: "release", hold: holdId, expired_before: expiredBefore === undefined ? null : BigInt(expiredBefore).toString(), ...(budgets.length > 0 && { scopes: budgets }) },
    accountId,
    null,
  );
  return answer.released === true;
}

/**
 * Releases every hold whose expires_at has passed, one short transaction per hold (`releaseOne`) so
 * that the sweep never holds many account locks at once. Scans the holds table, which only has the
 * holds of requests in flight (no expiry index to keep up on every request: migration 0004). Returns
 * how many it released.
 */
export async function releaseExpiredHolds(
  db: Kysely<Database>,
  now: number,
  releaseOne: (hold: { id: string; account_id: string; budgets: string | null }, expiredBefore: number) => Promise<boolean>,
  batch = 500,
): Promise<number> {
  let released = 0;
  for (;;) {
    const expired = await db.selectFrom("holds").select(["id", "account_id", "budgets"]).where("expires_at", "<=", BigInt(now)).orderBy("expires_at").limit(batch).execute();
    for (const hold of expired) {
      if (await releaseOne(hold, now)) released += 1;
    }
    if (expired.length < batch) return released;
  }
}
