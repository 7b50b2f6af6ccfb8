// The MCP gateway's sessions as every gateway process sees them (migration 0037, ADR 0045). A session
// is live while it is not closed and was used within the idle time; the per-key limit is counted
// here, for the whole gateway: opening one more closes the key's least recently used in the same
// transaction as the insert (PostgreSQL: under a transaction-scoped advisory lock per key; SQLite:
// its first statement writes, which takes the one write lock), so parallel opens on several
// processes cannot all pass the limit. Closed rows are kept a while (their reason), then pruned.
import { sql, type Kysely } from "kysely";
import { randomText } from "../core/ids.js";
import type { Dialect } from "./dialect.js";
import type { Database } from "./tables.js";
import { transact } from "./transact.js";

export interface StoredMcpSession {
  id: string;
  keyId: string;
  createdAt: number;
  lastUsedAt: number;
  closedAt: number | null;
  closeReason: string | null;
  protocolVersion: string;
  /** The client's initialize params (JSON text, as stored). */
  initializeParams: string;
}

export interface NewMcpSession {
  id: string;
  keyId: string;
  protocolVersion: string;
  initializeParams: string;
}

/** An Mcp-Session-Id: 192 random bits, visible ASCII as the protocol requires. */
export function newMcpSessionId(): string {
  return `mcps_${randomText(24, "base64url")}`;
}

export class McpSessionsStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /**
   * Records a new session; first closes the key's idle ones, then as many of its least recently used
   * as keep it within `maxPerKey` with this one. Answers the ids it closed.
   */
  async open(session: NewMcpSession, limits: { maxPerKey: number; idleMs: number }, now: number): Promise<string[]> {
    return transact(this.db, async (trx) => {
      if (this.dialect === "postgres") await sql`select pg_advisory_xact_lock(hashtextextended(${`mcp_sessions:${session.keyId}`}, 0))`.execute(trx);
      await trx
        .updateTable("mcp_sessions")
        .set({ closed_at: BigInt(now), close_reason: "idle" })
        .where("key_id", "=", session.keyId)
        .where("closed_at", "is", null)
        .where("last_used_at", "<", BigInt(now - limits.idleMs))
        .execute();
      const open = await trx
        .selectFrom("mcp_sessions")
        .select("id")
        .where("key_id", "=", session.keyId)
        .where("closed_at", "is", null)
        .orderBy("last_used_at")
        .orderBy("created_at")
        .execute();
      const closing = open.slice(0, Math.max(0, open.length - limits.maxPerKey + 1)).map((row) => row.id);
      if (closing.length > 0)
        await trx
          .updateTable("mcp_sessions")
          .set({ closed_at: BigInt(now), close_reason: "key's session limit" })
          .where("id", "in", closing)
          .execute();
      await trx
        .insertInto("mcp_sessions")
        .values({
          id: session.id,
          key_id: session.keyId,
          created_at: BigInt(now),
          last_used_at: BigInt(now),
          closed_at: null,
          close_reason: null,
          protocol_version: session.protocolVersion,
          initialize_params: session.initializeParams,
        })
        .execute();
      return closing;
    });
  }

  async get(id: string): Promise<StoredMcpSession | null> {
    const row = await this.db.selectFrom("mcp_sessions").selectAll().where("id", "=", id).executeTakeFirst();
    return row === undefined ? null : sessionOf(row);
  }

  /** The ids among `ids` that are not live any more (closed, idle or gone). */
  async dead(ids: readonly string[], idleMs: number, now: number): Promise<Set<string>> {
    const dead = new Set(ids);
    for (let i = 0; i < ids.length; i += 500) {
      const rows = await this.db
        .selectFrom("mcp_sessions")
        .select("id")
        .where("id", "in", ids.slice(i, i + 500))
        .where("closed_at", "is", null)
        .where("last_used_at", ">=", BigInt(now - idleMs))
        .execute();
      for (const row of rows) dead.delete(row.id);
    }
    return dead;
  }

  /** Records a use (only moves forward; a closed session stays closed). */
  async touch(id: string, now: number): Promise<void> {
    await this.db
      .updateTable("mcp_sessions")
      .set({ last_used_at: BigInt(now) })
      .where("id", "=", id)
      .where("closed_at", "is", null)
      .where("last_used_at", "<", BigInt(now))
      .execute();
  }

  /** Closes an open session; true when this call closed it. */
  async close(id: string, reason: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable("mcp_sessions")
      .set({ closed_at: BigInt(now), close_reason: reason })
      .where("id", "=", id)
      .where("closed_at", "is", null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Closes every idle session and deletes the rows closed before `pruneBefore`. */
  async sweep(idleMs: number, pruneBefore: number, now: number): Promise<{ closed: number; pruned: number }> {
    const closed = await this.db
      .updateTable("mcp_sessions")
      .set({ closed_at: BigInt(now), close_reason: "idle" })
      .where("closed_at", "is", null)
      .where("last_used_at", "<", BigInt(now - idleMs))
      .executeTakeFirst();
    const pruned = await this.db.deleteFrom("mcp_sessions").where("closed_at", "<", BigInt(pruneBefore)).executeTakeFirst();
    return { closed: Number(closed.numUpdatedRows), pruned: Number(pruned.numDeletedRows) };
  }
}

function sessionOf(row: {
  id: string;
  key_id: string;
  created_at: bigint;
  last_used_at: bigint;
  closed_at: bigint | null;
  close_reason: string | null;
  protocol_version: string;
  initialize_params: string;
}): StoredMcpSession {
  return {
    id: row.id,
    keyId: row.key_id,
    createdAt: Number(row.created_at),
    lastUsedAt: Number(row.last_used_at),
    closedAt: row.closed_at === null ? null : Number(row.closed_at),
    closeReason: row.close_reason,
    protocolVersion: row.protocol_version,
    initializeParams: row.initialize_params,
  };
}
