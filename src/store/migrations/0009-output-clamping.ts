// Output clamping (docs/billing.md, "Clamping"; docs/decisions/0010-output-clamping.md): an account
// and a key may turn it off. `clamp_output` is a 0/1 flag, default 1 (on), on accounts and keys.
// Adding a NOT NULL column with a constant default rewrites no row on either database.
// On PostgreSQL, gw_batch (gw-batch-function.ts, re-created by migrate.ts after every run) reads these
// flags to answer a refused admission with the headroom of every limit.
import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ["accounts", "keys"]) {
    await db.schema
      .alterTable(table)
      .addColumn("clamp_output", "bigint", (c) =>
        c
          .notNull()
          .defaultTo(1)
          .check(sql`clamp_output in (0, 1)`),
      )
      .execute();
  }
}
