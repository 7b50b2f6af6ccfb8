// One transaction for a store write, or the caller's: store methods run their statements through
// this, so that an audited change (Store.audited) runs the very same method inside the transaction
// that also appends its audit row, and both commit or roll back together.
import type { Kysely, Transaction } from "kysely";
import type { Database } from "./tables.js";

const MAX_BUSY_ATTEMPTS = 25;

/**
 * Runs `work` in a transaction (the caller's, when `db` is one). A transaction of its own is tried
 * again when SQLite answers SQLITE_BUSY: with several processes on one file, a deferred transaction
 * that reads and then writes cannot take the write lock once another process has committed since
 * its read (SQLITE_BUSY_SNAPSHOT, whatever the busy timeout), and one that must wait for the lock
 * can be refused instead. It wrote nothing, so running `work` again is safe; `work` must have no
 * effect outside the transaction. Inside a caller's transaction the caller decides.
 */
export async function transact<T>(db: Kysely<Database>, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db as Transaction<Database>);
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      if (!isSqliteBusy(error) || attempt >= MAX_BUSY_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10 * attempt + Math.random() * 10));
    }
  }
}

function isSqliteBusy(error: unknown): boolean {
  return String((error as { code?: unknown } | null)?.code ?? "").startsWith("SQLITE_BUSY");
}
