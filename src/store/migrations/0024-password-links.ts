// Set-password links (docs/dashboard.md, "People who sign in"): an administrator (dashboard, admin API
// or CLI) issues a single-use, expiring link for an account, to set its first password or a new one.
// Like sessions and invites, only the SHA-256 of the link's token is stored. A link is used once: the
// using transaction sets used_at with a conditional UPDATE (used_at null, expires_at in the future)
// and the account's password in the same transaction, so a second use finds no row to update.
// Issuing a new link for an account deletes its earlier ones.
import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("password_links")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("purpose", "text", (c) => c.notNull().check(sql`purpose in ('setup', 'reset')`))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("used_at", "bigint")
    .execute();
  await db.schema.createIndex("password_links_account").on("password_links").column("account_id").execute();
  await db.schema.createIndex("password_links_expires").on("password_links").column("expires_at").execute();
}
