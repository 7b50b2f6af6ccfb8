// A suspended or closed account changes nothing through the dashboard, administrators included.
// The write routes are not listed here: they are collected from the real route table (Fastify's
// onRoute over app.ts's ROUTES), so a write route added later outside the guard fails this test.
import pino from "pino";
import type { RouteOptions } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTES } from "../../src/app.js";
import { buildServer, type RouteRegistrar } from "../../src/http/server.js";
import type { Database } from "../../src/store/tables.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { DashboardClient, expectError, PASSWORD, signedInAccount } from "./support.js";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
// The only dashboard writes outside the signed-in scope: sign-in, sign-up and the set-password link
// run before a session exists (and a suspended account may still sign in to read), and signing out
// must always work.
const SESSION_LIFECYCLE_WRITES = new Set([
  "POST /dashboard/api/signin",
  "POST /dashboard/api/signup",
  "POST /dashboard/api/set-password/check",
  "POST /dashboard/api/set-password",
  "POST /dashboard/api/signout",
]);
const TABLES: ReadonlyArray<keyof Database> = [
  "accounts",
  "keys",
  "key_allocations",
  "ledger",
  "monthly_usage",
  "holds",
  "upstream_keys",
  "workspaces",
  "memberships",
  "invites",
  "sessions",
  "show_again_tokens",
  "video_tasks",
  "stored_responses",
  "auth_events",
  "password_links",
];

/** Every dashboard write route the real server registers, as "METHOD /url". */
async function dashboardWriteRoutes(gateway: TestGateway): Promise<string[]> {
  const found = new Set<string>();
  const collect: RouteRegistrar = (app) => {
    app.addHook("onRoute", (route: RouteOptions) => {
      for (const method of [route.method].flat()) found.add(`${method} ${route.url}`);
    });
  };
  const server = buildServer(gateway.app.ctx, pino({ level: "silent" }), [collect, ...ROUTES]);
  await server.ready();
  await server.close();
  return [...found].filter((route) => {
    const [method, url] = route.split(" ") as [string, string];
    return !SAFE_METHODS.has(method) && url.startsWith("/dashboard");
  });
}

describe("a suspended or closed account changes nothing on the dashboard", () => {
  let gateway: TestGateway;
  let writeRoutes: string[];

  beforeAll(async () => {
    gateway = await startGateway(mockConfig({ openaiUrl: "http://127.0.0.1:9" }));
    writeRoutes = await dashboardWriteRoutes(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const snapshot = async () => {
    const db = gateway.app.ctx.store.db;
    const tables: Record<string, string[]> = {};
    for (const table of TABLES) {
      const rows = await db.selectFrom(table).selectAll().execute();
      tables[table] = rows.map((row) => JSON.stringify(row, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v))).sort();
    }
    return tables;
  };

  it("the route table has the writes this test exists for", () => {
    expect(writeRoutes).toEqual(
      expect.arrayContaining(["PATCH /dashboard/api/admin/accounts/:id", "DELETE /dashboard/api/workspaces/:id/keys/:keyId", "DELETE /dashboard/api/keys/:id"]),
    );
    // Outside the signed-in scope only the session's own lifecycle may write.
    for (const route of SESSION_LIFECYCLE_WRITES) expect(writeRoutes).toContain(route);
  });

  it.each(["suspended", "closed"] as const)("a %s administrator gets 402 account_suspended on every write route, with no change", async (status) => {
    const store = gateway.app.ctx.store;
    const admin = await signedInAccount(gateway, { admin: true });
    const otherAdmin = await signedInAccount(gateway, { admin: true });
    const member = await gateway.createAccount();
    const { key: ownKey, raw: ownRaw } = await store.keys.create({ accountId: admin.account.id, name: "own" });
    const showAgain = await store.showAgain.put({ accountId: admin.account.id, keyId: ownKey.id, raw: ownRaw });
    const workspace = await store.workspaces.create("Team", admin.account.id);
    const joined = await store.workspaces.createInvite({ workspaceId: workspace.id, role: "member", createdBy: admin.account.id });
    await store.workspaces.acceptInvite(joined.token, member.account.id);
    const pending = await store.workspaces.createInvite({ workspaceId: workspace.id, role: "member", createdBy: admin.account.id });
    const { key: sharedKey } = await store.keys.create({ accountId: member.account.id, workspaceId: workspace.id });
    const otherWorkspace = await store.workspaces.create("Elsewhere", otherAdmin.account.id);
    const toAccept = await store.workspaces.createInvite({ workspaceId: otherWorkspace.id, role: "member", createdBy: otherAdmin.account.id });

    // Real ids and bodies that an active account's request would act on.
    const idFor = (url: string): string =>
      url.startsWith("/dashboard/api/keys/")
        ? ownKey.id
        : url.startsWith("/dashboard/api/workspaces/")
          ? workspace.id
          : url.startsWith("/dashboard/api/admin/accounts/")
            ? otherAdmin.account.id
            : "x";
    const fill = (url: string): string =>
      url
        .replace(":id", idFor(url))
        .replace(":accountId", member.account.id)
        .replace(":inviteId", pending.invite.id)
        .replace(":keyId", sharedKey.id)
        .replace(/:\w+|\*/g, "x");
    const bodies: Record<string, unknown> = {
      "PATCH /dashboard/api/admin/accounts/:id": { status: "suspended", is_admin: false },
      "POST /dashboard/api/keys": { name: "minted", account_id: otherAdmin.account.id },
      "PATCH /dashboard/api/keys/:id": { token_cap: 5 },
      "POST /dashboard/api/keys/:id/show-again": { token: showAgain.token },
      "POST /dashboard/api/workspaces": { name: "New" },
      "PATCH /dashboard/api/workspaces/:id/members/:accountId": { role: "admin" },
      "POST /dashboard/api/workspaces/:id/invites": { role: "member" },
      "POST /dashboard/api/invites/accept": { token: toAccept.token },
      "POST /dashboard/api/admin/accounts": { email: "newcomer@example.com" },
      "POST /dashboard/api/account/password": { current_password: PASSWORD, new_password: "a new password while suspended" },
    };

    await store.accounts.setStatus(admin.account.id, status);
    const before = await snapshot();
    const guarded = writeRoutes.filter((route) => !SESSION_LIFECYCLE_WRITES.has(route));
    for (const route of guarded) {
      const [method, url] = route.split(" ") as [string, string];
      const path = `${fill(url)}${method === "DELETE" ? "?confirm=true" : ""}`;
      const response = await admin.client.request(method, path, method === "DELETE" ? undefined : (bodies[route] ?? {}));
      try {
        expectError(response, 402, "account_suspended");
      } catch (error) {
        throw new Error(`${route} as a ${status} administrator: ${(error as Error).message}`);
      }
    }
    expect(await snapshot()).toEqual(before);

    // Administrator reads go too; the account's own reads and sign-out still work.
    expectError(await admin.client.get("/admin/accounts"), 402, "account_suspended");
    expect((await admin.client.get("/keys")).status).toBe(200);
    expect((await admin.client.post("/signout")).status).toBe(204);
    expect((await new DashboardClient(gateway.url).signIn(admin.account.email, PASSWORD)).status).toBe(200);

    // The same requests work once the account is active again (so the 402s above were the guard's).
    await store.accounts.setStatus(admin.account.id, "active");
    await admin.client.signIn(admin.account.email);
    const changed = await admin.client.patch(`/admin/accounts/${otherAdmin.account.id}`, { status: "suspended" });
    expect(changed.status, changed.text).toBe(200);
    expect((await admin.client.delete(`/workspaces/${workspace.id}/keys/${sharedKey.id}?confirm=true`)).status).toBe(200);
  });
});
