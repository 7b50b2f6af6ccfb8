// Card top-ups with Stripe (docs/billing.md, "Card top-ups"; ADR 0039). One row per Stripe event the
// gateway acted on, its id (Stripe's evt_…) the primary key: the row is written in the same
// transaction as the ledger credit or debit it caused, so a retried or concurrently delivered event
// finds the row and changes nothing, and a failed transaction leaves neither.
// - checkout_session: set on the credit row only, UNIQUE: one credit per Checkout Session whichever
//   event (completed, async_payment_succeeded) brings it.
// - refunded_cents: on the credit row, how much of its charge's refunds has been debited so far
//   (a charge.refunded event carries the charge's cumulative amount_refunded).
// - status: credited, debited, pending (a debit the balance cannot cover, waiting for the operator),
//   confirmed or dismissed (the operator's answer to a pending one), ignored (nothing to do; reason says why).
import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("stripe_events")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("object_id", "text", (c) => c.notNull())
    .addColumn("account_id", "text")
    .addColumn("payment_intent", "text")
    .addColumn("checkout_session", "text", (c) => c.unique())
    .addColumn("amount_nano", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("applied_nano", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("refunded_cents", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('credited', 'debited', 'pending', 'confirmed', 'dismissed', 'ignored')`))
    .addColumn("reason", "text")
    .addColumn("stripe_created_at", "bigint")
    .addColumn("received_at", "bigint", (c) => c.notNull())
    .addColumn("resolved_at", "bigint")
    .addColumn("resolved_by", "text")
    .execute();
  await db.schema.createIndex("stripe_events_status").on("stripe_events").columns(["status", "received_at"]).execute();
  await db.schema.createIndex("stripe_events_payment_intent").on("stripe_events").column("payment_intent").execute();
}
