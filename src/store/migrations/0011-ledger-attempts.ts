// A usage row records how many upstream attempts its request made (key and deployment failover
// included), shown by GET /v1/requests/{request_id}. Null on earlier rows and on balance rows: not
// counted. The hash chain covers the new column (ledger-chain.ts): the triggers are applied again with
// it appended; a null contributes nothing to the encoding, so every existing hash stays valid.
import { sql, type Kysely } from "kysely";
import type { Dialect } from "../dialect.js";
import { applyLedgerChainTriggers } from "../ledger-chain-sql.js";
import type { LedgerChainColumn } from "../ledger-chain.js";
import { LEDGER_CHAIN_COLUMNS_AT_0010 } from "./0010-ledger-hash-chain.js";

/** The chain's columns from this migration on (frozen): 0010's and the new column, appended. */
export const LEDGER_CHAIN_COLUMNS_AT_0011: readonly LedgerChainColumn[] = [...LEDGER_CHAIN_COLUMNS_AT_0010, { name: "attempts", type: "integer" }];

/** Far above every failover configuration; a bound so that a bug cannot store nonsense. */
export const MAX_LEDGER_ATTEMPTS = 1000;

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable("ledger")
    .addColumn("attempts", "bigint", (c) => c.check(sql`attempts is null or (attempts >= 0 and attempts <= ${sql.lit(MAX_LEDGER_ATTEMPTS)})`))
    .execute();
  await applyLedgerChainTriggers(db, dialect, LEDGER_CHAIN_COLUMNS_AT_0011);
}
