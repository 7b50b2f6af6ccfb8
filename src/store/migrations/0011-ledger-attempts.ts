// A usage row records how many upstream attempts its request made (key and deployment failover
// included), shown by GET /v1/requests/{request_id}. Null on earlier rows and on balance rows: not
// counted. The hash chain covers the new column (ledger-chain.ts): the triggers are applied again with
// it; a null contributes nothing to the encoding, so every existing hash stays valid.
import { sql, type Kysely } from "kysely";
import type { Dialect } from "../dialect.js";
import { applyLedgerChainTriggers } from "./ledger-chain-triggers.js";

/** Far above every failover configuration; a bound so that a bug cannot store nonsense. */
export const MAX_LEDGER_ATTEMPTS = 1000;

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable("ledger")
    .addColumn("attempts", "bigint", (c) => c.check(sql`attempts is null or (attempts >= 0 and attempts <= ${sql.lit(MAX_LEDGER_ATTEMPTS)})`))
    .execute();
  await applyLedgerChainTriggers(db, dialect);
}
