// The ledger records which deployment of a routing group served a request (docs/configuration.md,
// "Routing groups"): a nullable `deployment` column, null for rows of other kinds and of models in
// the single-provider form. Adding a nullable column rewrites no row, so the append-only triggers
// are untouched. On PostgreSQL, gw_batch (gw-batch-function.ts) writes it from the settle
// operation's 17th argument; gw_settle of migration 0002 is the single-operation reference the
// gateway never calls, and is left as it was.
import { sql, type Kysely } from "kysely";
import type { Dialect } from "../dialect.js";
import { GW_BATCH } from "./gw-batch-function.js";

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema.alterTable("ledger").addColumn("deployment", "text").execute();
  if (dialect === "postgres") await sql.raw(GW_BATCH).execute(db);
}
