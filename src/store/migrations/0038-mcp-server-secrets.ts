// The live catalog's MCP servers (docs/decisions/0051-mcp-servers-in-the-live-catalog.md): their
// header and environment values are credentials, so the catalog document names them only and their
// values are kept here, encrypted like the shared provider keys, one row per server and name.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("mcp_server_secrets")
    .addColumn("server", "text", (c) => c.notNull())
    /** header | env */
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("ciphertext", "text", (c) => c.notNull())
    .addColumn("last4", "text", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("mcp_server_secrets_pk", ["server", "kind", "name"])
    .execute();
}
