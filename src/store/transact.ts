// One transaction for a store write, or the caller's: store methods run their statements through
// this, so that an audited change (Store.audited) runs the very same method inside the transaction
// that also appends its audit row, and both commit or roll back together.
import type { Kysely, Transaction } from "kysely";
import type { Database } from "./tables.js";

export function transact<T>(db: Kysely<Database>, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db as Transaction<Database>);
  return db.transaction().execute(work);
}

const MAX_BUSY_ATTEMPTS = 25;

/**
 * One transaction, tried again when SQLite answers SQLITE_BUSY at once: with several processes on one
 * file, a deferred transaction that must wait for another's write lock can get it instead of
 * waiting. It wrote nothing, so trying again is safe. Inside a caller's transaction it is not retried.
 */
export async function transactRetryingBusy<T>(db: Kysely<Database>, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transact(db, work);
    } catch (error) {
      const code = String((error as { code?: unknown }).code ?? "");
      if (db.isTransaction || !code.startsWith("SQLITE_BUSY") || attempt >= MAX_BUSY_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10 * attempt + Math.random() * 10));
    }
  }
}
