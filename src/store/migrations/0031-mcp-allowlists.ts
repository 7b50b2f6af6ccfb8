// The MCP gateway's allowlists (docs/clients.md, "MCP"; ADR 0038): which MCP servers and tools a key,
// and every key of a workspace, may see and call at /mcp. JSON arrays of text, each a server name
// ("files": the whole server) or a prefixed tool name ("files__read"); null: no restriction. Read
// with the key at authentication, like allowed_models. Nullable columns without a default rewrite no
// row on either database.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("keys").addColumn("allowed_mcp", "text").execute();
  await db.schema.alterTable("workspaces").addColumn("allowed_mcp", "text").execute();
}
