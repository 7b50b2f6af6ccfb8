// Output clamping (docs/billing.md, "Clamping"; docs/decisions/0010-output-clamping.md): an account
// and a key may turn it off. `clamp_output` is a 0/1 flag, default 1 (on), on accounts and keys.
// Adding a NOT NULL column with a constant default rewrites no row on either database.
// On PostgreSQL, gw_batch (gw-batch-function.ts) now answers a refused admission with the headroom
// of every limit and these flags, so it is defined again here.
import { sql, type Kysely } from "kysely";
import type { Dialect } from "../dialect.js";
import { GW_BATCH } from "./gw-batch-function.js";

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
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
  if (dialect === "postgres") await sql.raw(GW_BATCH).execute(db);
}
