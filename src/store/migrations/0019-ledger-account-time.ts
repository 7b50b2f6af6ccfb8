// Drops ledger_account_time (account_id, created_at), the ledger's second index leading with the
// account (ADR 0027, "Ledger growth"). Every ledger row paid for it, and with many accounts each row
// lands on another of its pages: measured on SQLite, inserting into a 2.8M-row ledger across 120
// accounts, 38 → 31 µs of CPU per row (23 → 15 µs on an empty one), and 2.4 µs per row of the
// cost that grows with the ledger. No query needs it any more: the ledger page and the CSV read
// ledger_account_chain (account_id, id) since migration 0017, usage reads usage_hourly, and
// `ledger prune` finds each account's oldest rows on ledger_account_chain too (ledger-store.ts).
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("ledger_account_time").execute();
}
