// Releasing holds: a request that will not be settled (failure before any delivery), and holds left
// behind by a crashed gateway process: once they expire, or once the liveness of the process that took
// them (holds.holder, gateway_processes: process-liveness.ts, ADR 0054) has run out, whichever comes
// first. Deleting the hold row comes first and is the
// per-request mutex: whoever deletes it (release, sweeper or settlement) gives its reservation back,
// and its concurrency slot (holds.traffic, traffic-limits.ts), exactly once; the others find no row
// and change nothing.
//
// SQLite: precompiled SQL in one operation of the write batcher (sqlite-writer.ts). PostgreSQL: one
// release operation of the PL/pgSQL function gw_batch, the same statements, sent in a
// group-commit batch (postgres-batcher.ts). The sweeper re-checks in the delete itself on both that the
// hold expired or its holder is no longer alive: a hold settled or released meanwhile, or one whose
// holder renewed its liveness meanwhile, is not touched.
import type { Kysely } from "kysely";
import type { Database } from "../store/tables.js";
import { transact } from "../store/transact.js";
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
// Parameters: hold id, then the sweep's time twice. A holder without a live row (expired or gone) is dead.
const DELETE_SWEPT_HOLD = new Statement<DeletedHold>(`
  delete from holds where id = ? and (expires_at <= ? or (holder is not null and not exists
    (select 1 from gateway_processes p where p.holder = holds.holder and p.expires_at > ?)))
  returning account_id, key_id, amount_nano, tokens, traffic, budgets`);
const GIVE_BACK_ACCOUNT = new Statement<never>(`update accounts set held_nano = held_nano - ?, held_tokens = held_tokens - ? where id = ?`);
const GIVE_BACK_KEY = new Statement<never>(`update keys set held_nano = held_nano - ?, held_tokens = held_tokens - ? where id = ?`);

/**
 * Deletes one hold and returns its reservation to the account and key. False when already gone, or,
 * with `sweptAt` (the sweeper), when it has neither expired by then nor lost its holder.
 */
export function releaseHoldSqlite(exec: SqlExec, holdId: string, sweptAt?: number): boolean {
  const hold = sweptAt === undefined ? DELETE_HOLD.first(exec, [holdId]) : DELETE_SWEPT_HOLD.first(exec, [holdId, BigInt(sweptAt), BigInt(sweptAt)]);
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
export async function releaseHoldPostgres(batcher: PostgresBatcher, accountId: string, holdId: string, sweptAt?: number, budgets: readonly string[] = []): Promise<boolean> {
  // The hold's budget scopes, for gw_batch to lock before the account (budget-functions.ts); it gives back those of the deleted row.
  // dead_holders (migration 0040): the sweeper's release also takes a hold whose holder is no longer alive.
  const answer = await batcher.call(
    {
      k: "release",
      hold: holdId,
      expired_before: sweptAt === undefined ? null : BigInt(sweptAt).toString(),
      ...(sweptAt !== undefined && { dead_holders: 1 }),
      ...(budgets.length > 0 && { scopes: budgets }),
    },
    accountId,
    null,
  );
  return answer.released === true;
}

/**
 * Releases every hold whose expires_at has passed or whose holder's liveness has run out (its
 * gateway_processes row expired or gone), one short transaction per hold (`releaseOne`, which
 * re-checks both) so that the sweep never holds many account locks at once. Scans the holds table,
 * which only has the holds of requests in flight (no expiry or holder index to keep up on every
 * request: migrations 0004, 0040). Returns how many it released.
 */
export async function releaseExpiredHolds(
  db: Kysely<Database>,
  now: number,
  releaseOne: (hold: { id: string; account_id: string; budgets: string | null }, sweptAt: number) => Promise<boolean>,
  batch = 500,
): Promise<number> {
  const at = BigInt(now);
  let released = 0;
  for (;;) {
    const due = await db
      .selectFrom("holds")
      .select(["id", "account_id", "budgets"])
      .where((eb) =>
        eb.or([
          eb("expires_at", "<=", at),
          eb.and([
            eb("holder", "is not", null),
            eb.not(
              eb.exists(
                eb
                  .selectFrom("gateway_processes")
                  .select("gateway_processes.holder")
                  .whereRef("gateway_processes.holder", "=", "holds.holder")
                  .where("gateway_processes.expires_at", ">", at),
              ),
            ),
          ]),
        ]),
      )
      .orderBy("expires_at")
      .limit(batch)
      .execute();
    let releasedNow = 0;
    for (const hold of due) {
      if (await releaseOne(hold, now)) releasedNow += 1;
    }
    released += releasedNow;
    // A full batch of which none could be released would only be read again.
    if (due.length < batch || releasedNow === 0) return released;
  }
}

/**
 * Forgets the liveness rows of processes that are gone: expired, with no hold left that names them
 * (a row whose holds remain stays, so that an operator can still see whose they were).
 */
export async function forgetDeadProcesses(db: Kysely<Database>, now: number): Promise<void> {
  await transact(db, (trx) =>
    trx
      .deleteFrom("gateway_processes")
      .where("expires_at", "<=", BigInt(now))
      .where((eb) => eb.not(eb.exists(eb.selectFrom("holds").select("holds.id").whereRef("holds.holder", "=", "gateway_processes.holder"))))
      .execute(),
  );
}
