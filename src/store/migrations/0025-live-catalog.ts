// The live catalog (docs/decisions/0033-live-catalog.md): providers, models and tiers as numbered,
// append-only versions of one JSON document; the shared provider keys beside it, encrypted; and a
// one-row head whose serial every change of either bumps, in the change's transaction, so every
// process sharing the database sees a change by reading one row (or, on PostgreSQL, by NOTIFY).
import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("catalog_versions")
    .addColumn("version", "bigint", (c) => c.primaryKey())
    .addColumn("document", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("actor", "text")
    .addColumn("reason", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("provider_keys")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("label", "text", (c) => c.notNull())
    .addColumn("ciphertext", "text", (c) => c.notNull())
    .addColumn("fingerprint", "text", (c) => c.notNull())
    .addColumn("last4", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("provider_keys_provider").on("provider_keys").column("provider").execute();
  await db.schema
    .createTable("catalog_head")
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("serial", "bigint", (c) => c.notNull())
    .execute();
  await sql`INSERT INTO catalog_head (id, serial) VALUES (1, 0)`.execute(db);
}
