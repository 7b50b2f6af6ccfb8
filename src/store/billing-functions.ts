// Creates PostgreSQL's billing functions afresh from their one definition (gw-batch-function.ts):
// migrate.ts after every migration run up to the latest schema, openStore when the schema is
// already there (decision 0009: the functions follow the code, not a migration).
import { sql } from "kysely";
import { DIMENSION_SET, type DimensionSet } from "../core/dimensions.js";
import type { DatabaseHandle } from "./database.js";
import { billingFunctions as currentBillingFunctions } from "./gw-batch-function.js";

/** Serialises the re-creation of the billing functions across processes (CREATE OR REPLACE of one function concurrently fails). */
const BILLING_FUNCTIONS_LOCK = 7_104_211_009n;

/** CREATE OR REPLACE of every billing function (for a dimension set), in one transaction under an advisory lock. */
export async function createBillingFunctions(db: DatabaseHandle["db"], dimensions: DimensionSet = DIMENSION_SET): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${sql.lit(BILLING_FUNCTIONS_LOCK.toString())}::bigint)`.execute(trx);
    for (const statement of currentBillingFunctions(dimensions)) await sql.raw(statement).execute(trx);
  });
}
