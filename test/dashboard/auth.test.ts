// Sign-up, sign-in, sessions and their security: no route works without a session, CSRF is refused,
// sign-out ends the session, the cookie's attributes, sign-in throttling, the sign-up modes (open,
// invite, closed: the default once providers are configured).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { DashboardClient, expectError, PASSWORD, signedInAccount } from "./support.js";

// Every dashboard API route (the ids need not exist: the session check comes first).
const SIGNED_IN_ROUTES: Array<[string, string]> = [
  ["GET", "/keys"],
  ["POST", "/keys"],
  ["GET", "/keys/key_x"],
  ["PATCH", "/keys/key_x"],
  ["DELETE", "/keys/key_x?confirm=true"],
  ["DELETE", "/keys/key_x?confirm=true&permanent=true"],
  ["POST", "/keys/key_x/enable"],
  ["POST", "/keys/key_x/show-again"],
  ["GET", "/usage"],
  ["GET", "/ledger"],
  ["GET", "/ledger.csv"],
  ["GET", "/workspaces"],
  ["POST", "/workspaces"],
  ["GET", "/workspaces/ws_x"],
  ["PATCH", "/workspaces/ws_x/members/acct_x"],
  ["DELETE", "/workspaces/ws_x/members/acct_x"],
  ["GET", "/workspaces/ws_x/invites"],
  ["POST", "/workspaces/ws_x/invites"],
  ["DELETE", "/workspaces/ws_x/invites/inv_x"],
  ["GET", "/workspaces/ws_x/keys"],
  ["DELETE", "/workspaces/ws_x/keys/key_x?confirm=true"],
  ["GET", "/workspaces/ws_x/usage"],
  ["POST", "/invites/accept"],
  ["POST", "/account/password"],
  ["GET", "/admin/accounts"],
  ["POST", "/admin/accounts"],
  ["POST", "/admin/accounts/acct_x/password-link"],
  ["PATCH", "/admin/accounts/acct_x"],
  ["GET", "/session"],
  ["POST", "/signout"],
];

describe("dashboard sessions and security", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startGateway(mockConfig({ openaiUrl: "http://127.0.0.1:9" }).replace("server:\n", "server:\n  signup: open\n"));
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it("no route works without a session: 401 unauthenticated with X-Request-ID", async () => {
    const anonymous = new DashboardClient(gateway.url);
    for (const [method, path] of SIGNED_IN_ROUTES) {
      const body = method === "GET" || method === "DELETE" ? undefined : {};
      expectError(await anonymous.request(method, `/dashboard/api${path}`, body), 401, "unauthenticated");
    }
    anonymous.cookie = "mgw_session=forged-value";
    expectError(await anonymous.get("/keys"), 401, "unauthenticated");
  });

  it("signs up (open), starts a session with a safe cookie, and sign-out ends it", async () => {
    const client = new DashboardClient(gateway.url);
    const response = await client.post("/signup", { email: "New.User@Example.com", password: PASSWORD });
    expect(response.status).toBe(201);
    expect(response.body.account).toMatchObject({ email: "new.user@example.com", status: "active", balance_usd: "0.00", is_admin: false });
    const cookie = response.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^mgw_session=[A-Za-z0-9_-]{43}; Path=\/dashboard; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    expect(cookie).not.toContain("Secure");
    client.csrf = response.body.csrf_token;
    expect((await client.get("/session")).body.account.email).toBe("new.user@example.com");
    const stolen = client.cookie;

    const out = await client.post("/signout");
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    // The server forgot the session: replaying the old cookie does not work.
    const replay = new DashboardClient(gateway.url);
    replay.cookie = stolen;
    expectError(await replay.get("/keys"), 401, "unauthenticated");
    expectError(await client.post("/signup", { email: "new.user@example.com", password: PASSWORD }), 400, "invalid_request");
    expectError(await client.post("/signup", { email: "short@example.com", password: "short" }), 400, "invalid_request");
  });

  it("refuses writes without the CSRF token, with a wrong one, or from another origin: 403 forbidden", async () => {
    const { client } = await signedInAccount(gateway);
    const missing = await client.request("POST", "/dashboard/api/workspaces", { name: "x" }, { csrf: null });
    expectError(missing, 403, "forbidden");
    expect(missing.body.error.code).toBe("csrf_failed");
    expectError(await client.request("POST", "/dashboard/api/keys", {}, { csrf: "wrong" }), 403, "forbidden");
    expectError(await client.request("DELETE", "/dashboard/api/keys/key_x?confirm=true", undefined, { csrf: "wrong" }), 403, "forbidden");
    expectError(await client.request("POST", "/dashboard/api/signout", {}, { csrf: null }), 403, "forbidden");
    expectError(await client.request("POST", "/dashboard/api/keys", {}, { headers: { origin: "https://evil.example" } }), 403, "forbidden");
    expectError(await client.request("POST", "/dashboard/api/signin", { email: "a@b.c", password: "x" }, { headers: { origin: "https://evil.example" } }), 403, "forbidden");
    // A token from another session is not this session's token.
    const other = await signedInAccount(gateway);
    expectError(await client.request("POST", "/dashboard/api/workspaces", { name: "x" }, { csrf: other.client.csrf }), 403, "forbidden");
    expect((await client.request("POST", "/dashboard/api/workspaces", { name: "x" }, { headers: { origin: gateway.url } })).status).toBe(201);
    expect((await client.get("/workspaces")).body.data).toHaveLength(1);
    // Form-encoded or text bodies (what a cross-site form can send) are refused at sign-in.
    expectError(await client.request("POST", "/dashboard/api/signin", "email=a", { headers: { "content-type": "text/plain" } }), 400, "invalid_request");
  });

  it("wrong credentials are 401 unauthenticated; repeated failures are throttled with 429 and Retry-After", async () => {
    const { account } = await signedInAccount(gateway);
    const client = new DashboardClient(gateway.url);
    expectError(await client.signIn("nobody@example.com", "whatever"), 401, "unauthenticated");
    for (let i = 0; i < 5; i++) expectError(await client.signIn(account.email, "wrong password"), 401, "unauthenticated");
    const throttled = await client.signIn(account.email, PASSWORD);
    expectError(throttled, 429, "rate_limit_error");
    expect(throttled.body.error.code).toBe("signin_throttled");
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("each sign-in starts a fresh session; the previous one ends", async () => {
    const { account, client } = await signedInAccount(gateway);
    const oldCookie = client.cookie;
    await client.signIn(account.email);
    expect(client.cookie).not.toBe(oldCookie);
    const replay = new DashboardClient(gateway.url);
    replay.cookie = oldCookie;
    expectError(await replay.get("/session"), 401, "unauthenticated");
    expect(await gateway.app.ctx.store.sessions.countByAccount(account.id)).toBe(1);
  });

  it("an expired session is 401 unauthenticated", async () => {
    const { account, client } = await signedInAccount(gateway);
    await gateway.app.ctx.store.db
      .updateTable("sessions")
      .set({ expires_at: BigInt(Date.now() - 1) })
      .where("account_id", "=", account.id)
      .execute();
    expectError(await client.get("/keys"), 401, "unauthenticated");
  });
});

describe.each(["invite", "invite_only"])("invite-only sign-up (signup: %s)", (mode) => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startGateway(mockConfig({ openaiUrl: "http://127.0.0.1:9", extra: "" }).replace("server:\n", `server:\n  signup: ${mode}\n`));
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it("needs an invite; with one, the new account joins the workspace", async () => {
    // invite_only is the earlier name of invite.
    expect((await new DashboardClient(gateway.url).get("/config")).body).toEqual({ signup: "invite", password_sign_in: true, company_sign_in: null });
    const anonymous = new DashboardClient(gateway.url);
    expectError(await anonymous.post("/signup", { email: "x@example.com", password: PASSWORD }), 403, "forbidden");
    expectError(await anonymous.post("/signup", { email: "x@example.com", password: PASSWORD, invite_token: "inv_bad" }), 404, "not_found");
    expect(await gateway.app.ctx.store.accounts.getByEmail("x@example.com")).toBeNull();

    const owner = await signedInAccount(gateway);
    const ws = (await owner.client.post("/workspaces", { name: "Club" })).body.workspace.id;
    const { token } = (await owner.client.post(`/workspaces/${ws}/invites`, {})).body;
    const joined = await anonymous.post("/signup", { email: "x@example.com", password: PASSWORD, invite_token: token });
    expect(joined.status).toBe(201);
    anonymous.csrf = joined.body.csrf_token;
    expect((await anonymous.get("/workspaces")).body.data[0]).toMatchObject({ id: ws, role: "member" });
    expectError(await new DashboardClient(gateway.url).post("/signup", { email: "y@example.com", password: PASSWORD, invite_token: token }), 404, "invite_used");
  });
});

describe("closed sign-up: the default once providers are configured", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startGateway(mockConfig({ openaiUrl: "http://127.0.0.1:9" }));
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it("refuses every sign-up, with an invite too, and creates nothing; sign-in still works", async () => {
    expect((await new DashboardClient(gateway.url).get("/config")).body).toEqual({ signup: "closed", password_sign_in: true, company_sign_in: null });
    const anonymous = new DashboardClient(gateway.url);
    const refused = await anonymous.post("/signup", { email: "walk-in@example.com", password: PASSWORD });
    expectError(refused, 403, "forbidden");
    expect(refused.body.error.code).toBe("signup_closed");
    const owner = await signedInAccount(gateway);
    const ws = (await owner.client.post("/workspaces", { name: "Closed club" })).body.workspace.id;
    const { token } = (await owner.client.post(`/workspaces/${ws}/invites`, {})).body;
    expectError(await anonymous.post("/signup", { email: "walk-in@example.com", password: PASSWORD, invite_token: token }), 403, "forbidden");
    expect(await gateway.app.ctx.store.accounts.getByEmail("walk-in@example.com")).toBeNull();
    expect((await new DashboardClient(gateway.url).signIn(owner.account.email)).status).toBe(200);
  });
});
