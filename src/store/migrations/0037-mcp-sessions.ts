// The MCP gateway's sessions, shared by every process on the database (ADR 0045): one row per
// Mcp-Session-Id, so that any worker or gateway process accepts a live session of the same key and
// rebuilds its own copy from the stored initialize (its params and the negotiated protocol version).
// Closed rows keep their time and reason until pruned. (key_id, last_used_at) serves the per-key
// count and least-recently-used choice; closed_at the prune; last_used_at the idle sweep.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("mcp_sessions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("last_used_at", "bigint", (c) => c.notNull())
    .addColumn("closed_at", "bigint")
    .addColumn("close_reason", "text")
    .addColumn("protocol_version", "text", (c) => c.notNull())
    .addColumn("initialize_params", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("mcp_sessions_key_used").on("mcp_sessions").columns(["key_id", "last_used_at"]).execute();
  await db.schema.createIndex("mcp_sessions_used").on("mcp_sessions").column("last_used_at").execute();
  await db.schema.createIndex("mcp_sessions_closed").on("mcp_sessions").column("closed_at").execute();
}
