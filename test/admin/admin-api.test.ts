// The admin API (/admin/v1) end to end on both databases: admin tokens made with the CLI, scopes on
// every route, accounts with paging and search, idempotent credits under concurrent retries, keys,
// provider keys, usage, and the audit log (every change with before/after, append-only, written in
// the transaction of the change: a failure injected into the audit write leaves nothing behind).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_API_ROUTES } from "../../src/admin/index.js";
import { ADMIN_SCOPES, type AdminScope } from "../../src/admin/scopes.js";
import { runCli } from "../../src/cli/main.js";
import { requestWithRawHeaders } from "../support/raw-client.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { expectError, signedInAccount, type ApiResponse } from "../dashboard/support.js";

describe.each(DATABASE_KINDS)("admin API on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let configDir: string;
  let fullToken: string;
  let fullTokenId: string;

  /** Runs the real CLI against the gateway's database; returns the parsed --json output. */
  async function cli(argv: string[]): Promise<any> {
    const { code, stdout, stderr } = await cliRun(argv);
    if (code !== 0) throw new Error(`gateway ${argv.join(" ")} exited ${code}: ${stderr}`);
    return JSON.parse(stdout);
  }

  async function cliRun(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = "";
    let stderr = "";
    const code = await runCli([...argv, "--json"], {
      stdout: (text) => {
        stdout += text;
      },
      stderr: (text) => {
        stderr += text;
      },
      env: { ...gateway.database.env, GATEWAY_CONFIG: join(configDir, "gateway.config.yaml") },
      cwd: configDir,
    });
    return { code, stdout, stderr };
  }

  async function tokenWith(scopes: readonly string[], name = "test"): Promise<string> {
    const created = await cli(["admin", "token", "create", "--name", name, ...scopes.flatMap((s) => ["--scope", s])]);
    return created.token as string;
  }

  async function call(token: string | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> {
    const all: Record<string, string> = { ...headers };
    if (token !== null) all.authorization = `Bearer ${token}`;
    if (body !== undefined) all["content-type"] = "application/json";
    const response = await fetch(`${gateway.url}/admin/v1${path}`, { method, headers: all, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null, text };
  }
  const admin = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => call(fullToken, method, path, body, headers);

  async function auditOf(targetId: string): Promise<any[]> {
    const response = await admin("GET", `/audit?target_id=${encodeURIComponent(targetId)}`);
    expect(response.status, response.text).toBe(200);
    return response.body.data;
  }

  async function countRows(table: "ledger" | "audit_log" | "admin_idempotency"): Promise<number> {
    const row = await gateway.app.ctx.store.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<bigint>().as("n"))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("hi", { usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } }));
    const config = mockConfig({ openaiUrl: mock.url });
    gateway = await startGateway(config, { kind });
    configDir = mkdtempSync(join(tmpdir(), "gw-admin-"));
    writeFileSync(join(configDir, "gateway.config.yaml"), config);
    const created = await cli(["admin", "token", "create", "--name", "full", ...ADMIN_SCOPES.flatMap((s) => ["--scope", s])]);
    fullToken = created.token;
    fullTokenId = created.id;
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
    if (configDir) rmSync(configDir, { recursive: true, force: true });
  });

  it("refuses a missing, malformed, unknown or revoked token with 401 auth_error and X-Request-ID", async () => {
    const twice = await requestWithRawHeaders(`${gateway.url}/admin/v1/accounts`, "GET", [
      ["authorization", `Bearer ${fullToken}`],
      ["authorization", `Bearer ${fullToken}`],
    ]);
    expect(twice.status).toBe(401);
    expect(twice.body.error?.type).toBe("auth_error");
    expect(twice.requestId).toBeTruthy();
    expectError(await call(null, "GET", "/accounts"), 401, "auth_error");
    expectError(await call("nonsense", "GET", "/accounts"), 401, "auth_error");
    expectError(await call(`mgwadm_${"A".repeat(43)}`, "GET", "/accounts"), 401, "auth_error");
    // The CLI refuses unknown scopes and a token without scopes (usage errors, exit 2), creating nothing.
    const tokensBefore = (await cli(["admin", "token", "list"])).length as number;
    const unknown = await cliRun(["admin", "token", "create", "--name", "x", "--scope", "everything"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown scope "everything"');
    expect((await cliRun(["admin", "token", "create", "--name", "x"])).code).toBe(2);
    expect((await cli(["admin", "token", "list"])).length).toBe(tokensBefore);
    const token = await tokenWith(["accounts:read"], "short-lived");
    expect((await call(token, "GET", "/accounts")).status).toBe(200);
    const listed: any[] = await cli(["admin", "token", "list"]);
    const id = listed.find((t) => t.name === "short-lived").id;
    expect(listed.find((t) => t.name === "short-lived").scopes).toEqual(["accounts:read"]);
    expect(JSON.stringify(listed)).not.toContain(token);
    await cli(["admin", "token", "revoke", id]);
    expectError(await call(token, "GET", "/accounts"), 401, "auth_error");
    // The token's creation and revocation are in the audit log, by the CLI.
    const rows = await auditOf(id);
    expect(rows.map((r) => r.action)).toEqual(["admin_token.revoke", "admin_token.create"]);
    expect(rows[0].actor.type).toBe("cli");
    expect(rows[0].before.revoked).toBe(false);
    expect(rows[0].after.revoked).toBe(true);
  });

  it("enforces the scope of every route: 403 forbidden, code missing_scope, the scope named", async () => {
    const tokens = new Map<AdminScope, string>();
    for (const scope of ADMIN_SCOPES)
      tokens.set(
        scope,
        await tokenWith(
          ADMIN_SCOPES.filter((s) => s !== scope),
          `without-${scope}`,
        ),
      );
    expect(ADMIN_API_ROUTES.length).toBeGreaterThanOrEqual(15);
    for (const route of ADMIN_API_ROUTES) {
      const path = route.url.replace(":id", "acct_missing").replace(":keyId", "upk_missing");
      const body = route.method === "GET" || route.method === "DELETE" ? undefined : {};
      const refused = await call(tokens.get(route.scope)!, route.method, path, body);
      expectError(refused, 403, "forbidden");
      expect(refused.body.error.code, `${route.method} ${route.url}`).toBe("missing_scope");
      expect(refused.body.error.message).toContain(route.scope);
      // With the scope, the same call gets past the check (to validation or a 404).
      const allowed = await call(fullToken, route.method, path, body);
      expect(allowed.status, `${route.method} ${route.url}: ${allowed.text}`).not.toBe(403);
      expect(allowed.status).not.toBe(401);
    }
  });

  it("an opening balance is money in: it needs credits:write as well as accounts:write", async () => {
    const accountsOnly = await tokenWith(["accounts:read", "accounts:write"], "accounts-only");
    const [ledgerBefore, auditBefore] = [await countRows("ledger"), await countRows("audit_log")];
    const refused = await call(accountsOnly, "POST", "/accounts", { email: "rich@example.com", balance_usd: "1000000" });
    expectError(refused, 403, "forbidden");
    expect(refused.body.error.code).toBe("missing_scope");
    expect(refused.body.error.message).toContain("credits:write");
    expect([await countRows("ledger"), await countRows("audit_log")]).toEqual([ledgerBefore, auditBefore]);
    expect((await call(accountsOnly, "GET", "/accounts?q=rich@example.com")).body.data).toEqual([]);
    // Without money, or with a zero balance, accounts:write is enough.
    for (const [email, balance] of [
      ["plain@example.com", undefined],
      ["zero@example.com", "0.00"],
    ] as const) {
      const created = await call(accountsOnly, "POST", "/accounts", { email, ...(balance !== undefined && { balance_usd: balance }) });
      expect(created.status, created.text).toBe(201);
      expect(created.body.account.balance_usd).toBe("0.00");
    }
    const both = await tokenWith(["accounts:write", "credits:write"], "accounts-and-credits");
    const funded = await call(both, "POST", "/accounts", { email: "funded@example.com", balance_usd: "7.25" });
    expect(funded.status, funded.text).toBe(201);
    expect(funded.body.account.balance_usd).toBe("7.25");
  });

  it("creates, gets and changes accounts; each change in the audit log with before and after", async () => {
    const created = await admin("POST", "/accounts", { email: "New.Customer@Example.com", balance_usd: "5.00", monthly_budget_usd: "20", tier: "standard" });
    expect(created.status, created.text).toBe(201);
    const id = created.body.account.id as string;
    expect(created.body.account).toMatchObject({ email: "new.customer@example.com", balance_usd: "5.00", monthly_budget_usd: "20.00", status: "active", tier: "standard" });
    expect((await admin("GET", `/accounts/${id}`)).body.account.id).toBe(id);
    expectError(await admin("GET", "/accounts/acct_missing"), 404, "not_found");
    expectError(await admin("POST", "/accounts", { email: "new.customer@example.com" }), 400, "invalid_request");
    expectError(await admin("POST", "/accounts", { email: "x@example.com", tier: "platinum" }), 400, "invalid_request");
    expectError(await admin("POST", "/accounts", { email: "y@example.com", balance_usd: "1000000.01" }), 400, "invalid_request");
    expectError(await admin("POST", "/accounts", { email: "z@example.com", surprise: 1 }), 400, "invalid_request");

    const changed = await admin("PATCH", `/accounts/${id}`, { status: "suspended", tier: "premium", monthly_budget_usd: null, monthly_token_budget: 5000 });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.account).toMatchObject({ status: "suspended", tier: "premium", monthly_budget_usd: null, monthly_token_budget: 5000 });
    expectError(await admin("PATCH", `/accounts/${id}`, {}), 400, "invalid_request");
    expectError(await admin("PATCH", `/accounts/${id}`, { status: "frozen" }), 400, "invalid_request");
    expectError(await admin("PATCH", "/accounts/acct_missing", { status: "active" }), 404, "not_found");

    const rows = await auditOf(id);
    expect(rows.map((r) => r.action)).toEqual(["account.update", "account.create"]);
    const [update, create] = rows;
    expect(update.actor).toEqual({ type: "admin_token", id: fullTokenId, name: "full" });
    expect(update.before).toEqual({ status: "active", tier: "standard", monthly_budget_usd: "20.00", monthly_token_budget: null });
    expect(update.after).toEqual({ status: "suspended", tier: "premium", monthly_budget_usd: null, monthly_token_budget: 5000 });
    expect(update.client_address).toBe("127.0.0.1");
    expect(update.request_id).toBe(changed.headers.get("x-request-id"));
    expect(create.before).toBeNull();
    expect(create.after).toMatchObject({ email: "new.customer@example.com", balance_usd: "5.00" });
  });

  it("lists accounts a page at a time and finds them by email or id", async () => {
    const marker = `page${Date.now().toString(36)}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await admin("POST", "/accounts", { email: `${marker}-${i}@example.com` })).body.account.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: ApiResponse = await admin("GET", `/accounts?q=${marker}&limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status, page.text).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.map((a: { id: string }) => a.id));
      cursor = page.body.next_cursor;
      expect(page.body.has_more).toBe(cursor !== null);
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(ids);
    expect((await admin("GET", `/accounts?q=${marker.toUpperCase()}-3`)).body.data.map((a: { id: string }) => a.id)).toEqual([ids[3]]);
    expect((await admin("GET", `/accounts?q=${ids[1]}`)).body.data.map((a: { id: string }) => a.id)).toEqual([ids[1]]);
    expect((await admin("GET", "/accounts?q=%25")).body.data).toEqual([]);
    expectError(await admin("GET", "/accounts?cursor=garbage"), 400, "invalid_request");
    expectError(await admin("GET", "/accounts?limit=501"), 400, "invalid_request");
  });

  it("applies a credit once under 10 concurrent retries with one Idempotency-Key; every response equal", async () => {
    const { account } = await gateway.createAccount({ balance: "1.00" });
    const ledgerBefore = await countRows("ledger");
    const body = { amount_usd: "2.50", reason: "goodwill credit for ticket 42" };
    const key = `credit-${account.id}`;
    const responses = await Promise.all(Array.from({ length: 10 }, () => admin("POST", `/accounts/${account.id}/credits`, body, { "idempotency-key": key })));
    for (const r of responses) expect(r.status, r.text).toBe(200);
    expect(new Set(responses.map((r) => r.text)).size).toBe(1);
    expect(responses[0]!.body.account.balance_usd).toBe("3.50");
    expect(responses.filter((r) => r.headers.get("idempotent-replayed") === "true").length).toBe(9);
    expect((await gateway.app.ctx.store.accounts.get(account.id))!.balance).toBe(3_500_000_000n);
    expect(await countRows("ledger")).toBe(ledgerBefore + 1);
    const credits = (await auditOf(account.id)).filter((r) => r.action === "account.credit");
    expect(credits).toHaveLength(1);
    expect(credits[0].before).toEqual({ balance_usd: "1.00" });
    expect(credits[0].after).toEqual({ balance_usd: "3.50", amount_usd: "2.50", reason: "goodwill credit for ticket 42" });

    // A later retry gets the same answer; the same key with another body or route is a 409.
    const later = await admin("POST", `/accounts/${account.id}/credits`, body, { "idempotency-key": key });
    expect(later.text).toBe(responses[0]!.text);
    const reused = await admin("POST", `/accounts/${account.id}/credits`, { ...body, amount_usd: "3.00" }, { "idempotency-key": key });
    expectError(reused, 409, "conflict");
    expect(reused.body.error.code).toBe("idempotency_key_reused");
    expectError(await admin("POST", `/accounts/${account.id}/debits`, body, { "idempotency-key": key }), 409, "conflict");
    expect((await gateway.app.ctx.store.accounts.get(account.id))!.balance).toBe(3_500_000_000n);
  });

  it("debits with a reason; refuses a missing reason, a zero amount and a debit below zero, storing nothing", async () => {
    const { account } = await gateway.createAccount({ balance: "3.00" });
    expectError(await admin("POST", `/accounts/${account.id}/debits`, { amount_usd: "1" }), 400, "invalid_request");
    expectError(await admin("POST", `/accounts/${account.id}/debits`, { amount_usd: "0", reason: "x" }), 400, "invalid_request");
    expectError(await admin("POST", `/accounts/${account.id}/credits`, { amount_usd: "1", reason: "x" }, { "idempotency-key": "has space" }), 400, "invalid_request");
    const tooMuch = await admin("POST", `/accounts/${account.id}/debits`, { amount_usd: "5", reason: "refund" }, { "idempotency-key": `debit-${account.id}` });
    expectError(tooMuch, 400, "balance_invariant");
    // Nothing was stored under the key: the corrected retry with it runs.
    const again = await admin("POST", `/accounts/${account.id}/debits`, { amount_usd: "5", reason: "refund" }, { "idempotency-key": `debit-${account.id}` });
    expectError(again, 400, "balance_invariant");
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    const debit = await admin("POST", `/accounts/${account.id}/debits`, { amount_usd: "1.25", reason: "refund of order 7" });
    expect(debit.status, debit.text).toBe(200);
    expect(debit.body.account.balance_usd).toBe("1.75");
    expect((await auditOf(account.id)).map((r) => r.action)).toEqual(["account.debit"]);
    expectError(await admin("POST", "/accounts/acct_missing/credits", { amount_usd: "1", reason: "x" }), 404, "not_found");
  });

  it("creates keys with caps, lists, changes and revokes them; the key works until revoked", async () => {
    const { account } = await gateway.createAccount({ balance: "10" });
    const created = await admin("POST", `/accounts/${account.id}/keys`, { name: "ci", budget_cap_usd: "2.00", token_cap: 100000, clamp_output: false });
    expect(created.status, created.text).toBe(201);
    const raw = created.body.raw_key as string;
    const keyId = created.body.key.id as string;
    expect(created.body.key).toMatchObject({ name: "ci", budget_cap_usd: "2.00", token_cap: 100000, clamp_output: false, status: "enabled" });
    const me = () => fetch(`${gateway.url}/v1/me`, { headers: { authorization: `Bearer ${raw}` } });
    expect((await me()).status).toBe(200);
    const listed = await admin("GET", `/accounts/${account.id}/keys`);
    expect(listed.body.data.map((k: { id: string }) => k.id)).toContain(keyId);
    expect(listed.text).not.toContain(raw);
    expectError(await admin("POST", `/accounts/${account.id}/keys`, { budget_cap_usd: "-1" }), 400, "invalid_request");
    expectError(await admin("POST", "/accounts/acct_missing/keys", {}), 404, "not_found");

    const patched = await admin("PATCH", `/keys/${keyId}`, { budget_cap_usd: null, clamp_output: true });
    expect(patched.body.key).toMatchObject({ budget_cap_usd: null, clamp_output: true, token_cap: 100000 });
    // Key policies (ADR 0017) through the admin API, checked against the tier like the dashboard's.
    const restricted = await admin("PATCH", `/keys/${keyId}`, { allowed_models: ["gpt-mock"], period: "day", period_budget_usd: "0.50" });
    expect(restricted.status, restricted.text).toBe(200);
    expect(restricted.body.key.policy).toMatchObject({ allowed_models: ["gpt-mock"], periodic_budget: { period: "day", budget_usd: "0.50" } });
    expectError(await admin("PATCH", `/keys/${keyId}`, { allowed_models: ["premium-mock"] }), 400, "invalid_request");
    const revoked = await admin("POST", `/keys/${keyId}/revoke`);
    expect(revoked.body.key.status).toBe("revoked");
    expect((await me()).status).toBe(401);
    expectError(await admin("PATCH", `/keys/${keyId}`, { token_cap: 5 }), 409, "invalid_state");
    expectError(await admin("POST", "/keys/key_missing/revoke"), 404, "not_found");
    expect((await admin("GET", `/keys/${keyId}`)).body.key.status).toBe("revoked");

    const rows = await auditOf(keyId);
    expect(rows.map((r) => r.action)).toEqual(["key.revoke", "key.update", "key.update", "key.create"]);
    expect(rows[1]!.after).toMatchObject({ allowed_models: ["gpt-mock"], period: "day", period_budget_usd: "0.50" });
    expect(rows[1]!.before).toEqual({ allowed_models: null, period: null, period_budget_usd: null });
    expect(rows[0].before).toEqual({ status: "enabled" });
    expect(rows[0].after).toEqual({ status: "revoked" });
    expect(rows[2].before).toEqual({ budget_cap_usd: "2.00", clamp_output: false });
    expect(rows[2].after).toEqual({ budget_cap_usd: null, clamp_output: true });
    expect(rows[3].after).toMatchObject({ account_id: account.id, name: "ci", budget_cap_usd: "2.00" });
  });

  it("manages an account's provider keys: shows only the last four characters; audited without the secret", async () => {
    const { account } = await gateway.createAccount();
    const secret = "sk-own-provider-secret-7788";
    const added = await admin("POST", `/accounts/${account.id}/provider-keys`, { provider: "mockai", key: secret, label: "own" });
    expect(added.status, added.text).toBe(201);
    expect(added.body.provider_key).toMatchObject({ provider: "mockai", label: "own", last4: "7788" });
    expectError(await admin("POST", `/accounts/${account.id}/provider-keys`, { provider: "nope", key: secret }), 400, "invalid_request");
    const listed = await admin("GET", `/accounts/${account.id}/provider-keys`);
    expect(listed.body.data).toHaveLength(1);
    expect(listed.text).not.toContain(secret);
    const other = await gateway.createAccount();
    expectError(await admin("DELETE", `/accounts/${other.account.id}/provider-keys/${added.body.provider_key.id}`), 404, "not_found");
    expect((await admin("DELETE", `/accounts/${account.id}/provider-keys/${added.body.provider_key.id}`)).body.deleted).toBe(true);
    expect((await admin("GET", `/accounts/${account.id}/provider-keys`)).body.data).toHaveLength(0);
    const rows = await auditOf(added.body.provider_key.id);
    expect(rows.map((r) => r.action)).toEqual(["provider_key.remove", "provider_key.add"]);
    expect(JSON.stringify(rows)).not.toContain(secret);
  });

  it("reports an account's usage after gateway calls", async () => {
    const { account, raw } = await gateway.createAccount({ balance: "10" });
    for (let i = 0; i < 2; i++) {
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "hi" }] }),
      });
      expect(response.status).toBe(200);
    }
    const usage = await admin("GET", `/accounts/${account.id}/usage?days=7`);
    expect(usage.status, usage.text).toBe(200);
    expect(usage.body.account_id).toBe(account.id);
    expect(usage.body.totals.requests).toBe(2);
    expect(usage.body.totals.input_tokens).toBe(2000);
    expect(usage.body.totals.output_tokens).toBe(1000);
    expectError(await admin("GET", `/accounts/${account.id}/usage?days=0`), 400, "invalid_request");
    expectError(await admin("GET", "/accounts/acct_missing/usage"), 404, "not_found");
  });

  it("records CLI and dashboard administrator changes too, readable in the admin API and the dashboard", async () => {
    const made = await cli(["admin", "accounts", "create", "--email", `cli-${Date.now()}@example.com`, "--balance", "1"]);
    await cli(["admin", "accounts", "credit", made.id, "2", "--note", "cli credit"]);
    await cli(["admin", "accounts", "set-status", made.id, "suspended"]);
    const byCli = await auditOf(made.id);
    expect(byCli.map((r) => r.action)).toEqual(["account.update", "account.credit", "account.create"]);
    expect(byCli.every((r) => r.actor.type === "cli" && r.client_address === null)).toBe(true);
    expect(byCli[1].after).toMatchObject({ balance_usd: "3.00", reason: "cli credit" });

    const dash = await signedInAccount(gateway, { admin: true });
    const changed = await dash.client.patch(`/admin/accounts/${made.id}`, { status: "active", clamp_output: false });
    expect(changed.status, changed.text).toBe(200);
    const minted = await dash.client.post("/keys", { account_id: made.id, name: "for them" });
    expect(minted.status, minted.text).toBe(201);
    const rows = await auditOf(made.id);
    expect(rows[0]).toMatchObject({
      action: "account.update",
      actor: { type: "dashboard", id: dash.account.id, name: dash.account.email },
      before: { status: "suspended", clamp_output: true },
      after: { status: "active", clamp_output: false },
    });
    const keyRows = await auditOf(minted.body.key.id);
    expect(keyRows.map((r) => [r.action, r.actor.type])).toEqual([["key.create", "dashboard"]]);

    // Filters: by actor and action; the dashboard's admin page reads the same log.
    const byActor = await admin("GET", `/audit?actor_id=${dash.account.id}`);
    expect(byActor.body.data.map((r: { action: string }) => r.action).sort()).toEqual(["account.update", "key.create"]);
    const byAction = await admin("GET", "/audit?action=account.credit&actor_type=cli");
    expect(byAction.body.data.every((r: { action: string; actor: { type: string } }) => r.action === "account.credit" && r.actor.type === "cli")).toBe(true);
    expect(byAction.body.data.map((r: { target: { id: string } }) => r.target.id)).toContain(made.id);
    const dashboardView = await dash.client.get(`/admin/audit?target_id=${made.id}`);
    expect(dashboardView.status, dashboardView.text).toBe(200);
    expect(dashboardView.body.data.map((r: { id: string }) => r.id)).toEqual(rows.map((r) => r.id));
    const user = await signedInAccount(gateway);
    expectError(await user.client.get("/admin/audit"), 403, "forbidden");
  });

  it("records workspace owner and admin actions: invites, role changes, removals, revoking a member's key", async () => {
    const owner = await signedInAccount(gateway);
    const guest = await signedInAccount(gateway);
    const ws = (await owner.client.post("/workspaces", { name: "audited" })).body.workspace.id as string;
    const invite = await owner.client.post(`/workspaces/${ws}/invites`, { role: "member" });
    expect(invite.status, invite.text).toBe(201);
    expect((await guest.client.post("/invites/accept", { token: invite.body.token })).status).toBe(200);
    const withdrawn = (await owner.client.post(`/workspaces/${ws}/invites`, { role: "admin" })).body.invite.id as string;
    expect((await owner.client.delete(`/workspaces/${ws}/invites/${withdrawn}`)).status).toBe(204);
    expect((await owner.client.patch(`/workspaces/${ws}/members/${guest.account.id}`, { role: "admin" })).status).toBe(200);
    const shared = (await guest.client.post("/keys", { name: "shared", workspace_id: ws })).body.key.id as string;
    expect((await owner.client.delete(`/workspaces/${ws}/keys/${shared}?confirm=true`)).status).toBe(200);
    expect((await owner.client.delete(`/workspaces/${ws}/members/${guest.account.id}`)).status).toBe(204);

    const rows = await auditOf(ws);
    expect(rows.map((r) => r.action)).toEqual([
      "workspace.member_remove",
      "workspace.member_role",
      "workspace.invite_revoke",
      "workspace.invite_create",
      "workspace.invite_create",
    ]);
    expect(rows.every((r) => r.actor.id === owner.account.id && r.actor.type === "dashboard")).toBe(true);
    expect(rows[0].before).toEqual({ account_id: guest.account.id, role: "admin" });
    expect(rows[1]).toMatchObject({ before: { role: "member" }, after: { role: "admin" } });
    expect(JSON.stringify(rows)).not.toContain(invite.body.token);
    const keyRows = await auditOf(shared);
    expect(keyRows.map((r) => [r.action, r.actor.id])).toEqual([["key.revoke", owner.account.id]]);
  });

  it("pages through the audit log newest first", async () => {
    const all = await admin("GET", "/audit?limit=500");
    const total = all.body.data.length as number;
    expect(total).toBeGreaterThan(5);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: ApiResponse = await admin("GET", `/audit?limit=4${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...page.body.data.map((r: { id: string }) => r.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.body.data.map((r: { id: string }) => r.id));
    expect(seen.map(Number)).toEqual([...seen.map(Number)].sort((a, b) => b - a));
  });

  it("keeps audit rows append-only: updates, deletes and replacing inserts are refused by the database", async () => {
    const db = gateway.app.ctx.store.db;
    const before = await countRows("audit_log");
    const first = await db.selectFrom("audit_log").selectAll().orderBy("id").limit(1).executeTakeFirstOrThrow();
    await expect(db.updateTable("audit_log").set({ action: "tampered" }).where("id", "=", first.id).execute()).rejects.toThrow(/append-only/);
    await expect(db.deleteFrom("audit_log").where("id", "=", first.id).execute()).rejects.toThrow(/append-only/);
    if (kind === "sqlite") {
      await expect(
        sql`insert or replace into audit_log (id, created_at, actor_type, action, target_type, target_id) values (${first.id}, 0, 'cli', 'x', 'x', 'x')`.execute(db),
      ).rejects.toThrow(/append-only/);
    } else {
      await expect(sql`truncate audit_log`.execute(db)).rejects.toThrow(/append-only/);
    }
    expect(await countRows("audit_log")).toBe(before);
    expect((await db.selectFrom("audit_log").select("action").where("id", "=", first.id).executeTakeFirstOrThrow()).action).toBe(first.action);
  });

  it("rolls back the change when its audit write fails: neither the change nor an audit row remains", async () => {
    const db = gateway.app.ctx.store.db;
    const { account } = await gateway.createAccount({ balance: "4.00" });
    // A database-level failure of every audit insert, the way a full disk or a lost connection would fail it.
    if (kind === "sqlite") {
      await sql`create trigger inject_audit_failure before insert on audit_log begin select raise(abort, 'injected audit failure'); end`.execute(db);
    } else {
      await sql`create function inject_audit_failure() returns trigger language plpgsql as $$ begin raise exception 'injected audit failure'; end $$`.execute(db);
      await sql`create trigger inject_audit_failure before insert on audit_log for each row execute function inject_audit_failure()`.execute(db);
    }
    const ledgerBefore = await countRows("ledger");
    const auditBefore = await countRows("audit_log");
    const idempotencyBefore = await countRows("admin_idempotency");
    try {
      expectError(await admin("POST", `/accounts/${account.id}/credits`, { amount_usd: "1", reason: "x" }, { "idempotency-key": `fail-${account.id}` }), 500, "internal_error");
      expectError(await admin("PATCH", `/accounts/${account.id}`, { status: "closed", tier: "premium" }), 500, "internal_error");
      expectError(await admin("POST", `/accounts/${account.id}/keys`, { name: "never" }), 500, "internal_error");
      expectError(await admin("POST", "/accounts", { email: `never-${account.id}@example.com`, balance_usd: "1" }), 500, "internal_error");
    } finally {
      if (kind === "sqlite") {
        await sql`drop trigger inject_audit_failure`.execute(db);
      } else {
        await sql`drop trigger inject_audit_failure on audit_log`.execute(db);
        await sql`drop function inject_audit_failure()`.execute(db);
      }
    }
    const after = (await gateway.app.ctx.store.accounts.get(account.id))!;
    expect(after.balance).toBe(4_000_000_000n);
    expect(after.status).toBe("active");
    expect(after.tier).toBe("standard");
    expect(await gateway.app.ctx.store.keys.listByAccount(account.id)).toHaveLength(1);
    expect(await gateway.app.ctx.store.accounts.getByEmail(`never-${account.id}@example.com`)).toBeNull();
    expect(await countRows("ledger")).toBe(ledgerBefore);
    expect(await countRows("audit_log")).toBe(auditBefore);
    expect(await countRows("admin_idempotency")).toBe(idempotencyBefore);
    // The same Idempotency-Key then applies the credit (nothing was stored under it).
    const retried = await admin("POST", `/accounts/${account.id}/credits`, { amount_usd: "1", reason: "x" }, { "idempotency-key": `fail-${account.id}` });
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body.account.balance_usd).toBe("5.00");
  });
});
