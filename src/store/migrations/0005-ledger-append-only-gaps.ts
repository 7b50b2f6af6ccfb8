// Closes two ways around the ledger's append-only triggers of migration 0001.
//
// SQLite: `INSERT OR REPLACE INTO ledger` (or `REPLACE INTO`) with an existing id or request_id
// deletes the old row and inserts the new one; that deletion fires no DELETE trigger unless the
// connection has recursive_triggers on, so ledger_retention never saw it. A BEFORE INSERT trigger
// now refuses any row whose id or request_id already exists, whatever the conflict clause. This
// also turns `ON CONFLICT (request_id) DO NOTHING` into that refusal: settlement-sqlite.ts reads
// the refusal as the replay it is (by this message: LEDGER_ROW_EXISTS in db-errors.ts is its copy).
// Cost: two index probes per ledger insert, on pages the UNIQUE check has just read (measured
// with bench/billing-pair.ts, see docs/storage.md (the ledger is append-only)).
//
// PostgreSQL: `TRUNCATE ledger` fires no row trigger. A BEFORE TRUNCATE statement trigger refuses
// it. (INSERT … ON CONFLICT DO UPDATE is an UPDATE and already refused by ledger_guard.)
import { sql, type Kysely } from "kysely";
import type { Dialect } from "../dialect.js";

/** The message of the SQLite refusal; settlement recognises a replay by it. */
export const LEDGER_ROW_EXISTS = "ledger rows are append-only: this id or request_id is already recorded";

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect === "sqlite") {
    await sql`create trigger ledger_no_replace before insert on ledger
      when exists (select 1 from ledger where id = new.id) or exists (select 1 from ledger where request_id = new.request_id)
      begin select raise(abort, ${sql.lit(LEDGER_ROW_EXISTS)}); end`.execute(db);
    return;
  }
  await sql`create function ledger_truncate_guard() returns trigger language plpgsql as $$
      begin
        raise exception 'ledger rows are append-only: TRUNCATE is refused';
      end $$`.execute(db);
  await sql`create trigger ledger_no_truncate before truncate on ledger for each statement execute function ledger_truncate_guard()`.execute(db);
}
