// Rate and concurrency limits (docs/billing.md, "Rate and concurrency limits"; ADR 0016).
// - keys.limits, accounts.limits: the subject's own limits as JSON text (src/core/traffic-limits.ts,
//   LimitsSpec), null: only the tier's defaults apply. Read with the key at authentication.
// - traffic_windows: one row per limited scope ("key:<id>", "account:<id>", "key:<id>|model:<m>", ...):
//   the current 60-second window's start, the requests and tokens counted in it, and the requests in
//   flight. Written only by admission, settlement and release, under the account's lock (PostgreSQL)
//   or SQLite's single writer; a scope without a limit never gets a row.
// - holds.traffic: what the admission counted (the scopes and their windows' starts, the tokens), so
//   that whoever ends the hold (settlement, release, the sweeper) frees the slot and corrects the
//   tokens exactly once; null: nothing counted (no limit applied), and then nothing more is done.
// Nullable columns without a default rewrite no row on either database.
import { sql, type Kysely } from "kysely";
import type { Dialect } from "../dialect.js";

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  for (const table of ["accounts", "keys"]) {
    await db.schema.alterTable(table).addColumn("limits", "text").execute();
  }
  await db.schema.alterTable("holds").addColumn("traffic", "text").execute();
  let create = db.schema
    .createTable("traffic_windows")
    .addColumn("scope", "text", (c) => c.primaryKey())
    .addColumn("window_start", "bigint", (c) => c.notNull())
    .addColumn("requests", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("tokens", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("in_flight", "bigint", (c) => c.notNull().defaultTo(0));
  // SQLite: the row lives in the primary-key b-tree (one page per write, as holds: migration 0004).
  if (dialect === "sqlite") create = create.modifyEnd(sql`without rowid`);
  await create.execute();
}
