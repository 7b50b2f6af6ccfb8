// Workspaces, memberships and invites: the invite rows of the contract's state tables (docs/api-contract.md), roles (403
// forbidden), isolation (404), and one transaction per write (an injected failure is 500
// workspace_write_failed and leaves no partial change). On SQLite and PostgreSQL.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { expectError, signedInAccount, type DashboardClient } from "./support.js";

describe.each(DATABASE_KINDS)("dashboard workspaces on %s", (kind) => {
  let gateway: TestGateway;
  let owner: { client: DashboardClient; account: { id: string } };

  beforeAll(async () => {
    gateway = await startGateway(mockConfig({ openaiUrl: "http://127.0.0.1:9" }), { kind });
    owner = await signedInAccount(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
  });
  afterEach(() => {
    gateway.app.ctx.store.workspaces.failAfter = null;
  });

  const db = () => gateway.app.ctx.store.db;
  const newWorkspace = async (name = "Team") => {
    const response = await owner.client.post("/workspaces", { name });
    expect(response.status, response.text).toBe(201);
    return response.body.workspace.id as string;
  };
  const invite = async (ws: string, role = "member", client = owner.client) => {
    const response = await client.post(`/workspaces/${ws}/invites`, { role });
    expect(response.status, response.text).toBe(201);
    return response.body as { token: string; url: string; invite: { id: string } };
  };
  const tables = async () => ({
    workspaces: await db().selectFrom("workspaces").selectAll().orderBy("id").execute(),
    memberships: await db().selectFrom("memberships").selectAll().orderBy("workspace_id").orderBy("account_id").execute(),
    invites: await db().selectFrom("invites").selectAll().orderBy("id").execute(),
  });

  it("creates a workspace with the creator as owner and lists it", async () => {
    const ws = await newWorkspace("Research");
    const list = await owner.client.get("/workspaces");
    expect(list.body.data.find((w: { id: string }) => w.id === ws)).toMatchObject({ name: "Research", role: "owner", members: 1 });
    const detail = await owner.client.get(`/workspaces/${ws}`);
    expect(detail.body.members).toEqual([expect.objectContaining({ account_id: owner.account.id, role: "owner" })]);
    expectError(await owner.client.post("/workspaces", { name: "" }), 400, "invalid_request");
  });

  it("unused, unexpired invite + accept: the account becomes a member and the invite is used", async () => {
    const ws = await newWorkspace();
    const { token, url } = await invite(ws);
    expect(url).toBe(`/dashboard/invite#${token}`);
    const guest = await signedInAccount(gateway);
    const accepted = await guest.client.post("/invites/accept", { token });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ workspace: { id: ws }, role: "member" });
    const row = await db().selectFrom("invites").selectAll().where("workspace_id", "=", ws).executeTakeFirstOrThrow();
    expect(row.used_by).toBe(guest.account.id);
    expect((await guest.client.get(`/workspaces/${ws}`)).body.role).toBe("member");
  });

  it("used invite: 404 invite_used; expired: 404 invite_expired; already a member: 404 already_member; unknown: 404 not_found", async () => {
    const ws = await newWorkspace();
    const first = await invite(ws);
    const guest = await signedInAccount(gateway);
    await guest.client.post("/invites/accept", { token: first.token });
    const third = await signedInAccount(gateway);
    expectError(await third.client.post("/invites/accept", { token: first.token }), 404, "invite_used");

    const expiring = await invite(ws);
    await db()
      .updateTable("invites")
      .set({ expires_at: BigInt(Date.now() - 1000) })
      .where("id", "=", expiring.invite.id)
      .execute();
    expectError(await third.client.post("/invites/accept", { token: expiring.token }), 404, "invite_expired");

    const another = await invite(ws);
    expectError(await guest.client.post("/invites/accept", { token: another.token }), 404, "already_member");
    expectError(await owner.client.post("/invites/accept", { token: another.token }), 404, "already_member");
    expect((await db().selectFrom("invites").select("used_at").where("id", "=", another.invite.id).executeTakeFirstOrThrow()).used_at).toBeNull();

    expectError(await third.client.post("/invites/accept", { token: "inv_nope" }), 404, "not_found");
  });

  it("a role too low for the action is 403 forbidden", async () => {
    const ws = await newWorkspace();
    const member = await signedInAccount(gateway);
    await member.client.post("/invites/accept", { token: (await invite(ws, "member")).token });
    const admin = await signedInAccount(gateway);
    await admin.client.post("/invites/accept", { token: (await invite(ws, "admin")).token });

    expectError(await member.client.post(`/workspaces/${ws}/invites`, { role: "member" }), 403, "forbidden");
    expectError(await member.client.get(`/workspaces/${ws}/invites`), 403, "forbidden");
    expectError(await member.client.patch(`/workspaces/${ws}/members/${admin.account.id}`, { role: "member" }), 403, "forbidden");
    expectError(await member.client.delete(`/workspaces/${ws}/members/${admin.account.id}`), 403, "forbidden");
    expectError(await admin.client.post(`/workspaces/${ws}/invites`, { role: "admin" }), 403, "forbidden");
    expectError(await admin.client.patch(`/workspaces/${ws}/members/${member.account.id}`, { role: "admin" }), 403, "forbidden");

    // What the roles do allow.
    expect((await admin.client.post(`/workspaces/${ws}/invites`, { role: "member" })).status).toBe(201);
    expect((await owner.client.patch(`/workspaces/${ws}/members/${member.account.id}`, { role: "admin" })).body.member.role).toBe("admin");
    expectError(await owner.client.patch(`/workspaces/${ws}/members/${owner.account.id}`, { role: "admin" }), 409, "invalid_state");
    expectError(await owner.client.delete(`/workspaces/${ws}/members/${owner.account.id}`), 409, "invalid_state");
    expect((await admin.client.delete(`/workspaces/${ws}/members/${admin.account.id}`)).status).toBe(204); // leave
  });

  it("shares keys and usage with members; admins revoke shared keys, members cannot revoke others'", async () => {
    const ws = await newWorkspace();
    const member = await signedInAccount(gateway);
    await member.client.post("/invites/accept", { token: (await invite(ws)).token });
    const shared = await member.client.post("/keys", { name: "shared", workspace_id: ws });
    expect(shared.status).toBe(201);
    const ownerKey = await owner.client.post("/keys", { name: "owner's", workspace_id: ws });
    const keys = await owner.client.get(`/workspaces/${ws}/keys`);
    expect(keys.body.data.map((k: { name: string }) => k.name).sort()).toEqual(["owner's", "shared"]);
    expect(keys.text).not.toContain(shared.body.raw_key);
    expect((await member.client.get(`/workspaces/${ws}/usage?days=7`)).body.by_day).toHaveLength(7);
    expectError(await member.client.delete(`/workspaces/${ws}/keys/${ownerKey.body.key.id}?confirm=true`), 403, "forbidden");
    expectError(await owner.client.delete(`/workspaces/${ws}/keys/${shared.body.key.id}`), 400, "invalid_request");
    expect((await owner.client.delete(`/workspaces/${ws}/keys/${shared.body.key.id}?confirm=true`)).body.key.status).toBe("revoked");
    // A stranger cannot tag a key with a workspace they are not in.
    const stranger = await signedInAccount(gateway);
    expectError(await stranger.client.post("/keys", { workspace_id: ws }), 404, "not_found");
  });

  it("another account cannot see or change a workspace it is not in: 404 not_found", async () => {
    const ws = await newWorkspace();
    const { invite: pending } = await invite(ws);
    const stranger = await signedInAccount(gateway);
    const before = await tables();
    for (const [method, path, body] of [
      ["GET", `/workspaces/${ws}`],
      ["GET", `/workspaces/${ws}/keys`],
      ["GET", `/workspaces/${ws}/usage`],
      ["GET", `/workspaces/${ws}/invites`],
      ["POST", `/workspaces/${ws}/invites`, { role: "member" }],
      ["DELETE", `/workspaces/${ws}/invites/${pending.id}`],
      ["PATCH", `/workspaces/${ws}/members/${owner.account.id}`, { role: "admin" }],
      ["DELETE", `/workspaces/${ws}/members/${owner.account.id}`],
    ] as Array<[string, string, unknown?]>) {
      expectError(await stranger.client.request(method, `/dashboard/api${path}`, body), 404, "not_found");
    }
    expect((await stranger.client.get("/workspaces")).body.data).toEqual([]);
    expect(await tables()).toEqual(before);
  });

  it.each([
    ["create:workspace", "create"],
    ["create:membership", "create"],
    ["invite:invite", "invite"],
    ["accept:invite", "accept"],
    ["accept:membership", "accept"],
    ["set-role:membership", "set-role"],
    ["remove-member:membership", "remove-member"],
    ["revoke-invite:invite", "revoke-invite"],
  ])("an injected failure after %s is 500 workspace_write_failed with no partial change", async (point, operation) => {
    const ws = await newWorkspace();
    const member = await signedInAccount(gateway);
    await member.client.post("/invites/accept", { token: (await invite(ws)).token });
    const pending = await invite(ws);
    const joiner = await signedInAccount(gateway);
    const before = await tables();
    gateway.app.ctx.store.workspaces.failAfter = point;
    const attempt = {
      create: () => owner.client.post("/workspaces", { name: "Doomed" }),
      invite: () => owner.client.post(`/workspaces/${ws}/invites`, { role: "member" }),
      accept: () => joiner.client.post("/invites/accept", { token: pending.token }),
      "set-role": () => owner.client.patch(`/workspaces/${ws}/members/${member.account.id}`, { role: "admin" }),
      "remove-member": () => owner.client.delete(`/workspaces/${ws}/members/${member.account.id}`),
      "revoke-invite": () => owner.client.delete(`/workspaces/${ws}/invites/${pending.invite.id}`),
    }[operation]!;
    expectError(await attempt(), 500, "workspace_write_failed");
    expect(await tables()).toEqual(before);
    // Safe to retry: with the fault gone the same call succeeds.
    gateway.app.ctx.store.workspaces.failAfter = null;
    expect([200, 201, 204]).toContain((await attempt()).status);
  });
});
