// Top-ups by redemption code (docs/billing.md, "Redemption codes"; ADR 0024). Like API keys, only
// the SHA-256 of a code's normalised text is stored; `prefix` is what lists show to tell codes apart.
// A code is redeemed once: the redeeming transaction sets used_at with a conditional UPDATE (used_at,
// revoked_at null, expires_at in the future) and writes the ledger credit, so a concurrent second
// redemption finds no row to update. A used or revoked code keeps its row (the ledger note names it).
//
// upstream_health gains each key's last error (what it was, when) and the end of its 429 cooldown,
// written with the breaker window by the process that saw them, for the Upstreams page and
// `gateway admin upstreams status`.
//
// ledger_time: the administrators' usage across all accounts (docs/dashboard.md) reads a window of
// the whole ledger by time; the existing indexes all lead with an account or key.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("redemption_codes")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("hash", "text", (c) => c.notNull().unique())
    .addColumn("prefix", "text", (c) => c.notNull())
    .addColumn("value_nano", "bigint", (c) => c.notNull())
    .addColumn("batch", "text")
    .addColumn("note", "text")
    .addColumn("created_by", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("used_at", "bigint")
    .addColumn("used_by", "text")
    .addColumn("revoked_at", "bigint")
    .execute();
  await db.schema.createIndex("redemption_codes_batch").on("redemption_codes").columns(["batch", "created_at"]).execute();
  await db.schema.alterTable("upstream_health").addColumn("last_error", "text").execute();
  await db.schema
    .alterTable("upstream_health")
    .addColumn("last_error_at", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable("upstream_health")
    .addColumn("cooldown_until", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex("ledger_time").on("ledger").column("created_at").execute();
  await db.schema.createIndex("redemption_codes_created").on("redemption_codes").columns(["created_at", "id"]).execute();
}
