// Keys of the config file that an operator or the gateway disabled, and active health probes
// (docs/decisions/0036-key-tests-and-probes-are-the-operators.md).
//
// file_key_states: with catalog.source: file the keys live in the file, so their state lives here,
// keyed by provider and the key's fingerprint under the server secret (never the key). A change
// bumps catalog_head in its transaction, so every process follows it as it follows the catalog.
// gateway_leases: named leases with an expiry; the health probes run in the one process holding
// "health_probes". health_probe_results: each probed deployment's last probe, for the dashboard.
import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("file_key_states")
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("fingerprint", "text", (c) => c.notNull())
    .addColumn("last4", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('active', 'disabled')`))
    .addColumn("reason", "text")
    .addColumn("changed_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("file_key_states_pk", ["provider", "fingerprint"])
    .execute();
  await db.schema
    .createTable("gateway_leases")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("holder", "text", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();
  await sql`INSERT INTO gateway_leases (name, holder, expires_at) VALUES ('health_probes', '', 0)`.execute(db);
  await db.schema
    .createTable("health_probe_results")
    .addColumn("scope", "text", (c) => c.primaryKey())
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("model", "text", (c) => c.notNull())
    .addColumn("ok", "integer", (c) => c.notNull())
    .addColumn("status", "integer")
    .addColumn("latency_ms", "bigint", (c) => c.notNull())
    .addColumn("error", "text")
    .addColumn("checked_at", "bigint", (c) => c.notNull())
    .addColumn("failures_in_row", "integer", (c) => c.notNull())
    .execute();
}
