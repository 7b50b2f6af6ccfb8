// The response cache's opt-in (ADR 0044): one row per key or workspace that uses the cache, with its
// TTL and scope. subject is "key:<id>" or "workspace:<id>"; no row: that key or workspace does not
// use it. A separate table, so that the keys and workspaces rows read at authentication stay as they
// are. The ledger marks a cache hit without a new column: its provider is "(cache)", a name no
// configured provider can take (identifiers start with a letter or digit), covered by the chain hash.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("cache_settings")
    .addColumn("subject", "text", (c) => c.primaryKey())
    .addColumn("ttl_seconds", "integer", (c) => c.notNull())
    .addColumn("scope", "text", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
}
