// The ledger records which deployment of a routing group served a request (docs/configuration.md,
// "Routing groups"): a nullable `deployment` column, null for rows of other kinds and of models in
// the single-provider form. Adding a nullable column rewrites no row, so the append-only triggers
// are untouched. On PostgreSQL, gw_batch (gw-batch-function.ts, re-created by migrate.ts after every
// migration run) writes it from the settle operation's 17th argument.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("ledger").addColumn("deployment", "text").execute();
}
