// Circuit breakers shared by every gateway process on one database (src/upstreams/circuit-breaker.ts).
//
// One row per breaker scope ("key:<fingerprint>" for an upstream key: the first 12 hex of SHA-256 of
// provider name and key, never the key). state and opened_until are written by the process whose
// breaker opened or closed; every process polls rows with a changed_at newer than it has seen and
// adopts them, so all agree within a second. requests, failures and p50_ms are the window of the
// process that wrote last (every few seconds while it has traffic), for `gateway admin upstreams status`.
import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("upstream_health")
    .addColumn("scope", "text", (c) => c.primaryKey())
    .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('open', 'closed')`))
    .addColumn("opened_until", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("changed_at", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("requests", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("failures", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("p50_ms", "bigint")
    .addColumn("stats_at", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex("upstream_health_changed").on("upstream_health").column("changed_at").execute();
}
