// People who sign in (issue 40, item 6), on SQLite and PostgreSQL: an administrator adds a person
// (dashboard, admin API, CLI) and sends a set-password link that works once and expires; a newer link
// replaces an older one; a reset link leaves the old password working until it is used, and using it
// ends every session; a person changes their own password (the current one required, throttled,
// every other session ended); guessing link tokens is throttled; the admin API needs passwords:write
// and never resets an administrator; `gateway admin users reset-password` brings a locked-out
// administrator back. Every change is in the audit log, no token or password ever is.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { DashboardClient, expectError, PASSWORD, signedInAccount } from "./support.js";

const NEW_PASSWORD = "a brand new passphrase";
const DAY_MS = 24 * 3_600_000;

/** The token of a set-password link: the part after #. */
const tokenOf = (url: string): string => url.split("#")[1]!;

let counter = 0;
const freshEmail = (kind: string) => `person-${kind}-${++counter}-${Date.now()}@example.com`;

describe.each(DATABASE_KINDS)("people who sign in, on %s", (kind) => {
  let gateway: TestGateway;
  let admin: Awaited<ReturnType<typeof signedInAccount>>;

  beforeAll(async () => {
    gateway = await startGateway(mockConfig({ openaiUrl: "http://127.0.0.1:9" }), { kind });
    admin = await signedInAccount(gateway, { admin: true });
  });
  afterAll(async () => {
    await gateway?.close();
  });
  // Each test starts with no throttled attempts (every request here comes from 127.0.0.1).
  beforeEach(async () => {
    await gateway.app.ctx.store.db.deleteFrom("attempts").execute();
  });

  const store = () => gateway.app.ctx.store;
  const anonymous = () => new DashboardClient(gateway.url);
  const auditOf = async (targetId: string) => (await store().audit.list({ targetId, limit: 50 })).reverse();

  async function addPerson(email: string, body: Record<string, unknown> = {}) {
    const created = await admin.client.post("/admin/accounts", { email, ...body });
    expect(created.status, created.text).toBe(201);
    return { id: created.body.account.id as string, account: created.body.account, link: created.body.password_link, token: tokenOf(created.body.password_link.url) };
  }

  it("an administrator adds a person; the link works once, signs them in, and is audited without its token", async () => {
    const email = freshEmail(kind);
    const { id, account, link, token } = await addPerson(email.toUpperCase());
    expect(account).toMatchObject({ email, is_admin: false, status: "active", balance_usd: "0.00", password_set: false });
    expect(link).toMatchObject({ object: "password_link", account_id: id, purpose: "setup" });
    expect(link.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/dashboard\/set-password#[A-Za-z0-9_-]{43}$/);
    expect(Math.abs(Date.parse(link.expires_at) - Date.now() - DAY_MS)).toBeLessThan(60_000);
    // Only the token's hash is stored.
    const rows = await store().db.selectFrom("password_links").selectAll().where("account_id", "=", id).execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v))).not.toContain(token);
    // No password yet: nothing signs in.
    expectError(await anonymous().signIn(email, PASSWORD), 401, "unauthenticated");

    const person = anonymous();
    const check = await person.post("/set-password/check", { token });
    expect(check.status, check.text).toBe(200);
    expect(check.body).toEqual({ email, purpose: "setup", expires_at: link.expires_at });
    // A refused password leaves the link usable.
    expectError(await person.post("/set-password", { token, password: "short" }), 400, "invalid_request");
    const used = await person.post("/set-password", { token, password: NEW_PASSWORD });
    expect(used.status, used.text).toBe(200);
    expect(used.body.account).toMatchObject({ id, email });
    expect(used.headers.get("set-cookie")).toMatch(/^mgw_session=/);
    person.csrf = used.body.csrf_token;
    expect((await person.get("/session")).body.account.id).toBe(id);

    // Once only: the check and a second use are refused, and the password stays the first one.
    expectError(await anonymous().post("/set-password/check", { token }), 410, "password_link_invalid");
    expectError(await anonymous().post("/set-password", { token, password: "someone else's password" }), 410, "password_link_invalid");
    expectError(await anonymous().signIn(email, "someone else's password"), 401, "unauthenticated");
    expect((await anonymous().signIn(email, NEW_PASSWORD)).status).toBe(200);
    expect((await admin.client.get(`/admin/accounts/${id}`)).body.account.password_set).toBe(true);

    const audit = await auditOf(id);
    expect(audit.map((e) => e.action)).toEqual(["account.create", "account.password_link", "account.password_set"]);
    expect(audit[1]!.actor).toEqual({ type: "dashboard", id: admin.account.id, name: admin.account.email });
    expect(audit[1]!.after).toEqual({ link_id: link.id, purpose: "setup", expires_at: link.expires_at });
    expect(audit[2]!.actor).toEqual({ type: "dashboard", id, name: email });
    expect(audit[2]!.after).toEqual({ link_id: link.id, purpose: "setup", sessions_ended: 0 });
    const text = JSON.stringify(await store().audit.list({ limit: 500 }));
    expect(text).not.toContain(token);
    expect(text).not.toContain(NEW_PASSWORD);
  });

  it("a link expires, a newer one replaces an older one, and every refusal reads the same", async () => {
    const { id, token: first } = await addPerson(freshEmail(kind));
    const reissued = await admin.client.post(`/admin/accounts/${id}/password-link`);
    expect(reissued.status, reissued.text).toBe(201);
    expect(reissued.body.purpose).toBe("setup");
    const second = tokenOf(reissued.body.url);
    const replaced = await anonymous().post("/set-password", { token: first, password: NEW_PASSWORD });
    expectError(replaced, 410, "password_link_invalid");

    // The second link's expiry passes.
    await store()
      .db.updateTable("password_links")
      .set({ expires_at: BigInt(Date.now() - 1) })
      .where("account_id", "=", id)
      .execute();
    const expired = await anonymous().post("/set-password", { token: second, password: NEW_PASSWORD });
    expectError(expired, 410, "password_link_invalid");
    expectError(await anonymous().post("/set-password/check", { token: second }), 410, "password_link_invalid");
    // An unknown token: the same answer, so a link tells nothing about accounts.
    const unknown = await anonymous().post("/set-password/check", { token: "A".repeat(43) });
    expectError(unknown, 410, "password_link_invalid");
    expect(new Set([replaced, expired, unknown].map((r) => r.body.error.message)).size).toBe(1);
    expect((await store().accounts.get(id))!.hasPassword).toBe(false);
    // A malformed token is a 400 naming the field.
    const malformed = await anonymous().post("/set-password/check", { token: "not a token" });
    expectError(malformed, 400, "invalid_request");
    expect(malformed.body.error.param).toBe("token");
  });

  it("of concurrent uses of one link exactly one wins, and its password is the one set", async () => {
    const { id, account, token } = await addPerson(freshEmail(kind));
    const passwords = [1, 2, 3, 4, 5].map((n) => `concurrent password ${n}`);
    const answers = await Promise.all(passwords.map((password) => anonymous().post("/set-password", { token, password })));
    const won = answers.flatMap((answer, i) => (answer.status === 200 ? [passwords[i]!] : []));
    expect(won).toHaveLength(1);
    for (const answer of answers) if (answer.status !== 200) expectError(answer, 410, "password_link_invalid");
    for (const password of passwords) expect((await anonymous().signIn(account.email, password)).status).toBe(password === won[0] ? 200 : 401);
    expect((await auditOf(id)).filter((e) => e.action === "account.password_set")).toHaveLength(1);
  });

  it("a reset link: the old password works until it is used; using it ends every session of the account", async () => {
    const { account, client: laptop } = await signedInAccount(gateway, { email: freshEmail(kind) });
    const phone = anonymous();
    expect((await phone.signIn(account.email)).status).toBe(200);
    const issued = await admin.client.post(`/admin/accounts/${account.id}/password-link`);
    expect(issued.body.purpose).toBe("reset");
    // Issuing changes nothing yet.
    expect((await laptop.get("/session")).status).toBe(200);
    expect((await anonymous().signIn(account.email, PASSWORD)).status).toBe(200);

    const used = await anonymous().post("/set-password", { token: tokenOf(issued.body.url), password: NEW_PASSWORD });
    expect(used.status, used.text).toBe(200);
    expectError(await laptop.get("/session"), 401, "unauthenticated");
    expectError(await phone.get("/keys"), 401, "unauthenticated");
    expectError(await anonymous().signIn(account.email, PASSWORD), 401, "unauthenticated");
    expect((await anonymous().signIn(account.email, NEW_PASSWORD)).status).toBe(200);
    const setRow = (await auditOf(account.id)).find((e) => e.action === "account.password_set")!;
    expect(setRow.after).toMatchObject({ purpose: "reset", sessions_ended: 3 });
  });

  it("issuing links: administrators only, never for yourself, 404 for an unknown account", async () => {
    const { account: member, client } = await signedInAccount(gateway, { email: freshEmail(kind) });
    expectError(await client.post("/admin/accounts", { email: freshEmail(kind) }), 403, "forbidden");
    expectError(await client.post(`/admin/accounts/${admin.account.id}/password-link`), 403, "forbidden");
    const self = await admin.client.post(`/admin/accounts/${admin.account.id}/password-link`);
    expectError(self, 400, "invalid_request");
    expectError(await admin.client.post("/admin/accounts/acct_nope/password-link"), 404, "not_found");
    expectError(await admin.client.post("/admin/accounts", { email: member.email }), 400, "invalid_request");
    expectError(await admin.client.post("/admin/accounts", { email: freshEmail(kind), tier: "gold" }), 400, "invalid_request");
    expectError(await admin.client.post("/admin/accounts", { email: "not-an-email" }), 400, "invalid_request");
    // Without the CSRF token nothing is issued.
    expectError(await admin.client.request("POST", `/dashboard/api/admin/accounts/${member.id}/password-link`, {}, { csrf: null }), 403, "forbidden");
    expect(await store().passwordLinks.listByAccount(member.id)).toEqual([]);
    // An administrator made here is an administrator once the link is used.
    const { token } = await addPerson(freshEmail(kind), { is_admin: true, tier: "premium" });
    const used = await anonymous().post("/set-password", { token, password: NEW_PASSWORD });
    expect(used.body.account).toMatchObject({ is_admin: true, tier: "premium" });
  });

  it("a person changes their password: the current one is required and throttled; every other session ends", async () => {
    const { account, client } = await signedInAccount(gateway, { email: freshEmail(kind) });
    const other = anonymous();
    expect((await other.signIn(account.email)).status).toBe(200);
    const wrong = await client.post("/account/password", { current_password: "not it", new_password: NEW_PASSWORD });
    expectError(wrong, 400, "invalid_request");
    expect(wrong.body.error.param).toBe("current_password");
    expectError(await client.post("/account/password", { current_password: PASSWORD, new_password: "short" }), 400, "invalid_request");
    expectError(await client.request("POST", "/dashboard/api/account/password", { current_password: PASSWORD, new_password: NEW_PASSWORD }, { csrf: null }), 403, "forbidden");
    for (let i = 0; i < 4; i++) expectError(await client.post("/account/password", { current_password: `guess ${i}`, new_password: NEW_PASSWORD }), 400, "invalid_request");
    const throttled = await client.post("/account/password", { current_password: PASSWORD, new_password: NEW_PASSWORD });
    expectError(throttled, 429, "rate_limit_error");
    expect(throttled.body.error.code).toBe("password_throttled");
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
    await store().db.deleteFrom("attempts").execute();

    const changed = await client.post("/account/password", { current_password: PASSWORD, new_password: NEW_PASSWORD });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.account.id).toBe(account.id);
    // This browser goes on with a fresh session and CSRF token; the other is signed out.
    expect(changed.body.csrf_token).not.toBe(client.csrf);
    client.csrf = changed.body.csrf_token;
    expect((await client.get("/session")).status).toBe(200);
    expect((await client.post("/workspaces", { name: "after change" })).status).toBe(201);
    expectError(await other.get("/session"), 401, "unauthenticated");
    expect(await store().sessions.countByAccount(account.id)).toBe(1);
    expectError(await anonymous().signIn(account.email, PASSWORD), 401, "unauthenticated");
    expect((await anonymous().signIn(account.email, NEW_PASSWORD)).status).toBe(200);
    const row = (await auditOf(account.id)).find((e) => e.action === "account.password_change")!;
    expect(row.actor).toEqual({ type: "dashboard", id: account.id, name: account.email });
    expect(row.after).toEqual({ sessions_ended: 2 });
  });

  it("guessing link tokens is throttled per client address, the right token included", async () => {
    const { token } = await addPerson(freshEmail(kind));
    for (let i = 0; i < 5; i++) expectError(await anonymous().post("/set-password/check", { token: `${"B".repeat(42)}${i}` }), 410, "password_link_invalid");
    const throttled = await anonymous().post("/set-password", { token, password: NEW_PASSWORD });
    expectError(throttled, 429, "rate_limit_error");
    expect(throttled.body.error.code).toBe("password_link_throttled");
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
    await store().db.deleteFrom("attempts").execute();
    expect((await anonymous().post("/set-password", { token, password: NEW_PASSWORD })).status).toBe(200);
  });

  it("the admin API: creates a person with a link; a link needs passwords:write and is never an administrator's", async () => {
    const writer = (await store().adminTokens.create({ name: "people", scopes: ["accounts:write"] })).raw;
    const resetter = (await store().adminTokens.create({ name: "resets", scopes: ["passwords:write"] })).raw;
    const call = async (token: string, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${gateway.url}/admin/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { "content-type": "application/json" }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    const email = freshEmail(kind);
    const plain = await call(writer, "POST", "/accounts", { email: `plain-${email}` });
    expect(plain.status).toBe(201);
    expect(plain.body.password_link).toBeUndefined();
    expect(plain.body.account.password_set).toBe(false);
    const created = await call(writer, "POST", "/accounts", { email, password_link: true });
    expect(created.status).toBe(201);
    expect(created.body.password_link).toMatchObject({ object: "password_link", purpose: "setup", account_id: created.body.account.id });
    expect(created.body.password_link.url.startsWith(`${gateway.url}/dashboard/set-password#`)).toBe(true);
    const id: string = created.body.account.id;

    const missing = await call(writer, "POST", `/accounts/${id}/password-link`);
    expect(missing.status).toBe(403);
    expect(missing.body.error.code).toBe("missing_scope");
    const issued = await call(resetter, "POST", `/accounts/${id}/password-link`);
    expect(issued.status).toBe(201);
    expectError(await anonymous().post("/set-password", { token: tokenOf(created.body.password_link.url), password: NEW_PASSWORD }), 410, "password_link_invalid");
    expect((await anonymous().post("/set-password", { token: tokenOf(issued.body.url), password: NEW_PASSWORD })).status).toBe(200);
    // Holding a link is signing in as its account: a token never gets one for an administrator.
    const refused = await call(resetter, "POST", `/accounts/${admin.account.id}/password-link`);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("cannot_reset_administrator");
    expect(await store().passwordLinks.listByAccount(admin.account.id)).toEqual([]);
    expect((await call(resetter, "POST", "/accounts/acct_nope/password-link")).status).toBe(404);

    const audit = await auditOf(id);
    expect(audit.map((e) => [e.action, e.actor.type, e.actor.name])).toEqual([
      ["account.create", "admin_token", "people"],
      ["account.password_link", "admin_token", "people"],
      ["account.password_link", "admin_token", "resets"],
      ["account.password_set", "dashboard", email],
    ]);
  });

  it("the CLI: users create prints a link; reset-password brings a locked-out administrator back", async () => {
    // server.public_url names the links the CLI prints.
    const dir = mkdtempSync(join(tmpdir(), "gw-people-"));
    const configPath = join(dir, "gateway.config.yaml");
    writeFileSync(configPath, mockConfig({ openaiUrl: "http://127.0.0.1:9" }).replace("server:\n", "server:\n  public_url: https://gw.example.com/ai\n"));
    const cli = async (argv: string[]) => {
      let stdout = "";
      let stderr = "";
      const code = await runCli(argv, {
        stdout: (text) => void (stdout += text),
        stderr: (text) => void (stderr += text),
        env: { ...gateway.database.env, GATEWAY_CONFIG: configPath },
        cwd: dir,
      });
      return { code, stdout, stderr };
    };
    const email = freshEmail(kind);
    const created = await cli(["admin", "users", "create", "--email", email, "--json"]);
    expect(created.code, created.stderr).toBe(0);
    const answer = JSON.parse(created.stdout);
    expect(answer.account).toMatchObject({ email, is_admin: false, password_set: false });
    expect(answer.password_link.url).toMatch(/^https:\/\/gw\.example\.com\/ai\/dashboard\/set-password#[A-Za-z0-9_-]{43}$/);
    expect((await anonymous().post("/set-password", { token: tokenOf(answer.password_link.url), password: NEW_PASSWORD })).status).toBe(200);

    // The administrator forgot their password: an operator with a shell issues a reset link.
    const text = await cli(["admin", "users", "reset-password", "--email", admin.account.email]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`password reset link for ${admin.account.email}`);
    expect(text.stdout).toContain("works once");
    const url = /https:\/\/\S+/.exec(text.stdout)![0];
    const back = await anonymous().post("/set-password", { token: tokenOf(url), password: NEW_PASSWORD });
    expect(back.status, back.text).toBe(200);
    expect(back.body.account).toMatchObject({ id: admin.account.id, is_admin: true });
    // The administrator's earlier session ended with the reset; signing in again works.
    expectError(await admin.client.get("/session"), 401, "unauthenticated");
    expect((await admin.client.signIn(admin.account.email, NEW_PASSWORD)).status).toBe(200);
    const byId = await cli(["admin", "users", "reset-password", admin.account.id, "--json"]);
    expect(JSON.parse(byId.stdout)).toMatchObject({ purpose: "reset", account_id: admin.account.id });
    const rows = (await auditOf(admin.account.id)).filter((e) => e.action === "account.password_link");
    expect(rows.map((e) => e.actor.type)).toEqual(["cli", "cli"]);

    expect((await cli(["admin", "users", "reset-password", "--email", "nobody@example.com"])).code).toBe(2);
    expect((await cli(["admin", "users", "create", "--email", "not-an-email"])).code).toBe(2);
    expect((await cli(["admin", "users", "create", "--email", email])).code).not.toBe(0);
    expect((await cli(["admin", "users", "rename"])).code).toBe(2);
  });
});
