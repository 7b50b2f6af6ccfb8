// The response cache's opt-in from the dashboard (issue 46 item 2): a key's owner sets, changes and
// removes its key's setting; another account gets 404; a workspace's admins set the workspace's, a
// plain member reads it and gets 403 on a change; TTLs outside the config's bounds and scope gateway
// (not allowed here) are 400; every change writes an audit row; a key without its own setting shows
// the workspace's as what applies. On SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { expectError, signedInAccount, type DashboardClient } from "./support.js";

const CACHE_SECTION = `
cache:
  default_ttl_seconds: 60
  min_ttl_seconds: 10
  max_ttl_seconds: 600
`;

describe.each(DATABASE_KINDS)("dashboard response cache settings on %s", (kind) => {
  let gateway: TestGateway;
  let owner: { client: DashboardClient; account: { id: string } };

  beforeAll(async () => {
    gateway = await startGateway(mockConfig({ openaiUrl: "http://127.0.0.1:9", extra: CACHE_SECTION }), { kind });
    owner = await signedInAccount(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const auditActions = async (targetId: string) =>
    (await gateway.app.ctx.store.db.selectFrom("audit_log").select(["action", "actor_type", "actor_id"]).where("target_id", "=", targetId).orderBy("id").execute()).map(
      (row) => `${row.action} ${row.actor_type} ${row.actor_id}`,
    );
  const newKey = async (client: DashboardClient, workspaceId?: string) => {
    const response = await client.post("/keys", { name: "cached", ...(workspaceId && { workspace_id: workspaceId }) });
    expect(response.status, response.text).toBe(201);
    return response.body.key.id as string;
  };

  it("the key's owner turns the cache on, changes it and turns it off, audited", async () => {
    const keyId = await newKey(owner.client);
    const before = await owner.client.get(`/keys/${keyId}/cache`);
    expect(before.status, before.text).toBe(200);
    expect(before.body).toMatchObject({ subject_type: "key", id: keyId, cache: null, applies: null });
    expect(before.body.bounds).toEqual({ default_ttl_seconds: 60, min_ttl_seconds: 10, max_ttl_seconds: 600, allow_gateway_scope: false });

    const on = await owner.client.patch(`/keys/${keyId}/cache`, {});
    expect(on.status, on.text).toBe(200);
    expect(on.body.cache).toMatchObject({ ttl_seconds: 60, scope: "account" });
    expect(on.body.applies).toEqual({ source: "key", source_id: keyId, ttl_seconds: 60, scope: "account" });
    const changed = await owner.client.patch(`/keys/${keyId}/cache`, { ttl_seconds: 300 });
    expect(changed.body.cache.ttl_seconds).toBe(300);
    const stored = await gateway.app.ctx.store.cacheSettings.read([`key:${keyId}`]);
    expect(stored.get(`key:${keyId}`)).toMatchObject({ ttlSeconds: 300, scope: "account" });

    const off = await owner.client.delete(`/keys/${keyId}/cache`);
    expect(off.status, off.text).toBe(200);
    expect(off.body).toMatchObject({ cache: null, applies: null });
    expect((await gateway.app.ctx.store.cacheSettings.read([`key:${keyId}`])).size).toBe(0);
    const me = owner.account.id;
    expect(await auditActions(keyId)).toEqual([`key.cache dashboard ${me}`, `key.cache dashboard ${me}`, `key.cache dashboard ${me}`]);
  });

  it("refuses TTLs outside the bounds, scope gateway when not allowed and unknown fields (400), changing nothing", async () => {
    const keyId = await newKey(owner.client);
    expectError(await owner.client.patch(`/keys/${keyId}/cache`, { ttl_seconds: 5 }), 400, "invalid_request");
    expectError(await owner.client.patch(`/keys/${keyId}/cache`, { ttl_seconds: 601 }), 400, "invalid_request");
    expectError(await owner.client.patch(`/keys/${keyId}/cache`, { ttl_seconds: 60.5 }), 400, "invalid_request");
    expectError(await owner.client.patch(`/keys/${keyId}/cache`, { scope: "gateway" }), 400, "invalid_request");
    expectError(await owner.client.patch(`/keys/${keyId}/cache`, { scope: "everyone" }), 400, "invalid_request");
    expectError(await owner.client.patch(`/keys/${keyId}/cache`, { ttl_seconds: 60, shared: true }), 400, "invalid_request");
    expect((await owner.client.get(`/keys/${keyId}/cache`)).body.cache).toBeNull();
    expect(await auditActions(keyId)).toEqual([]);
  });

  it("another account's key answers 404 to every method", async () => {
    const keyId = await newKey(owner.client);
    const stranger = await signedInAccount(gateway);
    expectError(await stranger.client.get(`/keys/${keyId}/cache`), 404, "not_found");
    expectError(await stranger.client.patch(`/keys/${keyId}/cache`, { ttl_seconds: 60 }), 404, "not_found");
    expectError(await stranger.client.delete(`/keys/${keyId}/cache`), 404, "not_found");
    expect((await gateway.app.ctx.store.cacheSettings.read([`key:${keyId}`])).size).toBe(0);
  });

  it("workspace: admins set it, a member reads it and gets 403, a stranger 404; a key inherits it", async () => {
    const created = await owner.client.post("/workspaces", { name: "Cached team" });
    const ws = created.body.workspace.id as string;
    const member = await signedInAccount(gateway);
    const invite = await owner.client.post(`/workspaces/${ws}/invites`, { role: "member" });
    expect((await member.client.post("/invites/accept", { token: invite.body.token })).status).toBe(200);
    const admin = await signedInAccount(gateway);
    const adminInvite = await owner.client.post(`/workspaces/${ws}/invites`, { role: "admin" });
    expect((await admin.client.post("/invites/accept", { token: adminInvite.body.token })).status).toBe(200);

    expectError(await member.client.patch(`/workspaces/${ws}/cache`, { ttl_seconds: 60 }), 403, "forbidden");
    expectError(await member.client.delete(`/workspaces/${ws}/cache`), 403, "forbidden");
    const stranger = await signedInAccount(gateway);
    expectError(await stranger.client.get(`/workspaces/${ws}/cache`), 404, "not_found");
    expectError(await stranger.client.patch(`/workspaces/${ws}/cache`, { ttl_seconds: 60 }), 404, "not_found");
    expectError(await admin.client.patch(`/workspaces/${ws}/cache`, { ttl_seconds: 9 }), 400, "invalid_request");

    const on = await admin.client.patch(`/workspaces/${ws}/cache`, { ttl_seconds: 120 });
    expect(on.status, on.text).toBe(200);
    expect(on.body).toMatchObject({ subject_type: "workspace", id: ws, cache: { ttl_seconds: 120, scope: "account" } });
    expect((await member.client.get(`/workspaces/${ws}/cache`)).body.cache).toMatchObject({ ttl_seconds: 120 });

    // A member's key in the workspace follows the workspace until it has its own setting.
    const keyId = await newKey(member.client, ws);
    const inherited = await member.client.get(`/keys/${keyId}/cache`);
    expect(inherited.body).toMatchObject({ cache: null, applies: { source: "workspace", source_id: ws, ttl_seconds: 120, scope: "account" } });
    await member.client.patch(`/keys/${keyId}/cache`, { ttl_seconds: 30 });
    expect((await member.client.get(`/keys/${keyId}/cache`)).body.applies).toEqual({ source: "key", source_id: keyId, ttl_seconds: 30, scope: "account" });

    expect((await owner.client.delete(`/workspaces/${ws}/cache`)).body.cache).toBeNull();
    expect((await auditActions(ws)).filter((a) => a.startsWith("workspace.cache"))).toEqual([
      `workspace.cache dashboard ${admin.account.id}`,
      `workspace.cache dashboard ${owner.account.id}`,
    ]);
  });
});
