// Alerts by webhook (docs/operations.md, "Alerts"; ADR 0040).
// - alert_subscriptions: an endpoint (url, format json|slack) and the event types it wants; the
//   operator's (workspace_id null: every event) or a workspace's (its events only). The signing secret
//   is encrypted with the server secret like provider keys.
// - alert_events: the outbox. dedup_key is UNIQUE: an event (a budget crossing, a report's period)
//   is inserted with ON CONFLICT DO NOTHING, so it exists once whichever process noticed it first.
// - alert_deliveries: one per event and subscription; the dispatcher claims due rows with a lease
//   (lease_until), retries with backoff (next_attempt_at) and records each attempt's outcome.
// - scheduled_runs: when a scheduled job (ledger verify, spend reports) last ran and how it ended.
// Two lease rows: the scheduled ledger verify and the spend reports run in one process at a time.
import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("alert_subscriptions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("workspace_id", "text")
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("format", "text", (c) => c.notNull().check(sql`format in ('json', 'slack')`))
    .addColumn("events", "text", (c) => c.notNull())
    .addColumn("secret_ciphertext", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("enabled", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("created_by", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("alert_subscriptions_workspace").on("alert_subscriptions").column("workspace_id").execute();
  await db.schema
    .createTable("alert_events")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("dedup_key", "text", (c) => c.notNull().unique())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("workspace_id", "text")
    .addColumn("account_id", "text")
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("alert_deliveries")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("event_id", "text", (c) => c.notNull())
    .addColumn("subscription_id", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('pending', 'delivered', 'failed')`))
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_attempt_at", "bigint", (c) => c.notNull())
    .addColumn("lease_until", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("last_status", "integer")
    .addColumn("last_error", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addColumn("delivered_at", "bigint")
    .execute();
  await db.schema.createIndex("alert_deliveries_due").on("alert_deliveries").columns(["status", "next_attempt_at"]).execute();
  await db.schema.createIndex("alert_deliveries_subscription").on("alert_deliveries").columns(["subscription_id", "created_at"]).execute();
  await db.schema
    .createTable("scheduled_runs")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("last_started_at", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("last_finished_at", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("last_ok", "integer")
    .addColumn("last_detail", "text")
    .execute();
  await sql`INSERT INTO gateway_leases (name, holder, expires_at) VALUES ('ledger_verify', '', 0), ('spend_reports', '', 0)`.execute(db);
}
