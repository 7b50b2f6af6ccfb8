// Holds of a dead process released within a minute (issue 44, ADR 0054, docs/billing.md "Holds").
// - holds.holder: the gateway process that took the hold (its liveness row below); null: a hold with a
//   lifetime of its own (a video task, settled later by whichever process), or one the previous release
//   took. A hold without a holder ends only at its expires_at, as before.
// - gateway_processes: one row per serving process, renewed while it lives (expires_at, epoch ms). The
//   sweeper releases the holds whose holder's row has run out or is gone. Expand-only (ADR 0050): a
//   nullable column and a new table; no index on holds.holder (holds only has requests in flight, and
//   every admission would pay for one: migration 0018).
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("holds").addColumn("holder", "text").execute();
  await db.schema
    .createTable("gateway_processes")
    .addColumn("holder", "text", (c) => c.primaryKey())
    .addColumn("started_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();
}
