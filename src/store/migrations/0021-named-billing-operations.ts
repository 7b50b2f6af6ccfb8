// gw_batch takes each operation's values as named fields ({"k": "settle", "hold": …, "row": {…}})
// instead of an array of positional arguments ({"k": "settle", "a": [hold, account, …]}), and the
// traffic limits as [{scope, rpm, tpm, concurrency}] (gw-batch-function.ts, traffic-functions.ts).
// Positional arguments tied the function to the dimension list: the ledger's dimension columns sat at
// positions 17 to 31, so a dimension added to the list moved every argument after them.
//
// PostgreSQL: the positional gw_batch is dropped here; migrate.ts creates the named one from its
// current definition at the end of this run, as after every run (ADR 0009), so no database past this
// migration keeps a function that reads positional arguments, even if that creation failed. A gateway
// process of the previous version still running sends positional operations: the named gw_batch
// refuses them by name (an error, never a half-read operation). SQLite has no stored functions.
import { sql, type Kysely } from "kysely";
import type { Dialect } from "../dialect.js";

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect === "postgres") await sql`drop function if exists gw_batch(jsonb)`.execute(db);
}
