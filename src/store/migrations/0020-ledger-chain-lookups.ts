// PostgreSQL's chain triggers ask for an account's latest ledger row, and whether a later one exists,
// as a row comparison on (account_id, id) (ledger-chain-sql.ts): the earlier form's cached generic
// plan walked the primary key backwards, reading every row appended since the account's last one. The
// triggers' functions are created again with the new statements; the hashes they compute are the same.
// The deferred head trigger also leaves the account row alone when its ledger_head already is the
// row's hash: gw_batch writes the head with the account's other counters (gw-batch-function.ts).
// SQLite's triggers read the head from the accounts row and are unchanged.
import type { Kysely } from "kysely";
import type { Dialect } from "../dialect.js";
import { applyLedgerChainTriggers } from "../ledger-chain-sql.js";
import { LEDGER_CHAIN_COLUMNS_AT_0011 } from "./0011-ledger-attempts.js";

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect === "postgres") await applyLedgerChainTriggers(db, dialect, LEDGER_CHAIN_COLUMNS_AT_0011);
}
