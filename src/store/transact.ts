// One transaction for a store write, or the caller's: store methods run their statements through
// this, so that an audited change (Store.audited) runs the very same method inside the transaction
// that also appends its audit row, and both commit or roll back together.
import type { Kysely, Transaction } from "kysely";
import type { Database } from "./tables.js";

export function transact<T>(db: Kysely<Database>, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db as Transaction<Database>);
  return db.transaction().execute(work);
}
