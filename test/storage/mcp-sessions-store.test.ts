// The shared MCP session store (migration 0037) on both databases, through two stores on one
// database as two processes would be: parallel opens of one key never leave more than its limit open
// (the least recently used are closed), idle sessions are dead and swept, closed rows are pruned.
import { afterEach, describe, expect, it } from "vitest";
import { McpSessionsStore, newMcpSessionId } from "../../src/store/mcp-sessions-store.js";
import { openStore, type Store } from "../../src/store/index.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";

const IDLE_MS = 60_000;

describe.each(DATABASE_KINDS)("MCP session store (%s)", (kind) => {
  let database: TestDatabase | null = null;
  const stores: Store[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    await database?.drop();
    database = null;
  });

  async function twoStores(): Promise<[McpSessionsStore, McpSessionsStore, Store]> {
    database = await createTestDatabase(kind);
    const options = { databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret };
    stores.push(await openStore(options), await openStore(options));
    return [new McpSessionsStore(stores[0]!.db, stores[0]!.dialect), new McpSessionsStore(stores[1]!.db, stores[1]!.dialect), stores[0]!];
  }
  const session = (keyId: string) => ({ id: newMcpSessionId(), keyId, protocolVersion: "2025-11-25", initializeParams: "{}" });

  it("keeps a key within its limit across parallel opens on two stores, closing the least recently used", async () => {
    const [a, b, store] = await twoStores();
    const now = 1_000_000;
    const first = session("key_a");
    await a.open(first, { maxPerKey: 3, idleMs: IDLE_MS }, now);
    const other = session("key_b");
    await b.open(other, { maxPerKey: 3, idleMs: IDLE_MS }, now);
    const opened = Array.from({ length: 12 }, () => session("key_a"));
    await Promise.all(opened.map((s, i) => (i % 2 === 0 ? a : b).open(s, { maxPerKey: 3, idleMs: IDLE_MS }, now + 10 + i)));
    const open = await store.db.selectFrom("mcp_sessions").select(["id", "key_id"]).where("closed_at", "is", null).execute();
    expect(open.filter((row) => row.key_id === "key_a")).toHaveLength(3);
    // Another key's session is not touched; the first (least recently used) is closed by the limit.
    expect(open.map((row) => row.id)).toContain(other.id);
    expect((await a.get(first.id))!.closeReason).toBe("key's session limit");
    expect(await a.dead([first.id, other.id], IDLE_MS, now + 100)).toEqual(new Set([first.id]));
  });

  it("an idle session is dead, then swept closed, then pruned; a touched one lives on", async () => {
    const [a, b] = await twoStores();
    const now = 2_000_000;
    const idle = session("key_c");
    const used = session("key_c");
    await a.open(idle, { maxPerKey: 5, idleMs: IDLE_MS }, now);
    await b.open(used, { maxPerKey: 5, idleMs: IDLE_MS }, now);
    await b.touch(used.id, now + IDLE_MS - 1);
    const later = now + IDLE_MS + 1;
    expect(await b.dead([idle.id, used.id, "mcps_unknown"], IDLE_MS, later)).toEqual(new Set([idle.id, "mcps_unknown"]));
    expect(await a.sweep(IDLE_MS, 0, later)).toEqual({ closed: 1, pruned: 0 });
    expect((await b.get(idle.id))!.closeReason).toBe("idle");
    // A closed session is not reopened by a touch, and is pruned once closed long enough.
    await a.touch(idle.id, later + 1);
    expect((await a.get(idle.id))!.closedAt).toBe(later);
    expect(await a.close(used.id, "deleted by the client", later + 5)).toBe(true);
    expect(await a.close(used.id, "deleted by the client", later + 6)).toBe(false);
    expect(await b.sweep(IDLE_MS, later + 1, later + 10)).toEqual({ closed: 0, pruned: 1 });
    expect(await a.get(idle.id)).toBeNull();
    expect(await a.get(used.id)).not.toBeNull();
  });
});
