// The dashboard's administration routes on both databases (docs/dashboard.md, "Administration"):
// account search and detail; tier, monthly budgets and the account's own rate limits (enforced at the
// gateway at once, cleared again); credits and debits with a required reason (ledger row and audit
// row); an account's provider keys (never shown again); usage across all accounts by account, model
// and provider. Non-administrators get 403 on every one of these routes; the admin API sets limits too.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { expectError, signedInAccount, type DashboardClient } from "./support.js";

describe.each(DATABASE_KINDS)("dashboard administration on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let admin: { client: DashboardClient; account: { id: string } };

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("hi", { usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } }));
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }), { kind });
    admin = await signedInAccount(gateway, { admin: true, email: `root-${kind}@example.com` });
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  const chat = (raw: string) =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "hi" }] }),
    });
  const auditOf = async (id: string) => (await admin.client.get(`/admin/audit?target_id=${id}`)).body.data as Array<{ action: string; before: any; after: any }>;

  it("searches accounts and shows one with its budgets", async () => {
    const { account } = await gateway.createAccount({ email: `needle-${kind}@example.com`, monthlyBudget: "40" });
    const found = await admin.client.get("/admin/accounts?q=NEEDLE");
    expect(found.body.data.map((a: { email: string }) => a.email)).toEqual([`needle-${kind}@example.com`]);
    expect((await admin.client.get(`/admin/accounts?q=${account.id}`)).body.data).toHaveLength(1);
    expect((await admin.client.get("/admin/accounts?q=nobody-matches-this")).body.data).toEqual([]);
    const one = await admin.client.get(`/admin/accounts/${account.id}`);
    expect(one.body.account).toMatchObject({ id: account.id, monthly_budget_usd: "40.00", monthly_token_budget: null, tier: "standard", limits: null });
    expectError(await admin.client.get("/admin/accounts/acct_missing"), 404, "not_found");
    expectError(await admin.client.get(`/admin/accounts?q=${"x".repeat(255)}`), 400, "invalid_request");
  });

  it("changes tier and budgets, and sets and clears the account's limits (enforced at once), audited", async () => {
    const { account, raw } = await gateway.createAccount({ balance: "50" });
    const changed = await admin.client.patch(`/admin/accounts/${account.id}`, { tier: "premium", monthly_budget_usd: "12.5", monthly_token_budget: 100000 });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.account).toMatchObject({ tier: "premium", monthly_budget_usd: "12.50", monthly_token_budget: 100000 });
    expectError(await admin.client.patch(`/admin/accounts/${account.id}`, { tier: "platinum" }), 400, "invalid_request");
    expectError(await admin.client.patch(`/admin/accounts/${account.id}`, { monthly_budget_usd: "-1" }), 400, "invalid_request");
    expectError(await admin.client.patch(`/admin/accounts/${account.id}`, { surprise: 1 }), 400, "invalid_request");

    expect((await chat(raw)).status).toBe(200); // the key is in the auth cache now
    const limited = await admin.client.patch(`/admin/accounts/${account.id}`, { limits: { requests_per_minute: 1, models: { "gpt-mock": { concurrent_requests: 2 } } } });
    expect(limited.body.account.limits).toEqual({ requests_per_minute: 1, models: { "gpt-mock": { concurrent_requests: 2 } } });
    expect((await chat(raw)).status).toBe(200);
    const refused = await chat(raw);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("account_rpm_exceeded");
    expect((await admin.client.patch(`/admin/accounts/${account.id}`, { limits: null })).body.account.limits).toBeNull();
    expect((await chat(raw)).status).toBe(200);
    expectError(await admin.client.patch(`/admin/accounts/${account.id}`, { limits: { requests_per_minute: -1 } }), 400, "invalid_request");

    const audit = await auditOf(account.id);
    expect(audit.map((row) => row.action)).toEqual(["account.update", "account.update", "account.update"]);
    expect(audit[0]!.after).toEqual({ limits: null });
    expect(audit[2]!.after).toMatchObject({ tier: "premium", monthly_budget_usd: "12.50", monthly_token_budget: 100000 });
  });

  it("credits and debits with a required reason: ledger row with the reason, audit row", async () => {
    const { account } = await gateway.createAccount({ balance: "5" });
    const credited = await admin.client.post(`/admin/accounts/${account.id}/credits`, { amount_usd: "2.25", reason: "refund for outage #42" });
    expect(credited.status, credited.text).toBe(200);
    expect(credited.body.account.balance_usd).toBe("7.25");
    const debited = await admin.client.post(`/admin/accounts/${account.id}/debits`, { amount_usd: "1", reason: "chargeback" });
    expect(debited.body.account.balance_usd).toBe("6.25");
    expectError(await admin.client.post(`/admin/accounts/${account.id}/credits`, { amount_usd: "1" }), 400, "invalid_request");
    expectError(await admin.client.post(`/admin/accounts/${account.id}/credits`, { amount_usd: "1", reason: "   " }), 400, "invalid_request");
    expectError(await admin.client.post(`/admin/accounts/${account.id}/credits`, { amount_usd: "0", reason: "nothing" }), 400, "invalid_request");
    expectError(await admin.client.post(`/admin/accounts/${account.id}/debits`, { amount_usd: "100", reason: "too much" }), 400, "balance_invariant");
    expectError(await admin.client.post("/admin/accounts/acct_missing/credits", { amount_usd: "1", reason: "x" }), 404, "not_found");
    const ledger = (await admin.client.get(`/admin/accounts/${account.id}/ledger`)).body.data;
    expect(ledger.slice(0, 2).map((r: { kind: string; cost_usd: string; note: string }) => [r.kind, r.cost_usd, r.note])).toEqual([
      ["debit", "1.00", "chargeback"],
      ["credit", "2.25", "refund for outage #42"],
    ]);
    const audit = await auditOf(account.id);
    expect(audit.map((row) => row.action)).toEqual(["account.debit", "account.credit"]);
    expect(audit[1]!.after).toMatchObject({ amount_usd: "2.25", reason: "refund for outage #42", balance_usd: "7.25" });
  });

  it("adds and removes an account's provider keys; the key never comes back", async () => {
    const { account } = await gateway.createAccount();
    const secret = "sk-account-own-key-abcdef123456";
    const added = await admin.client.post(`/admin/accounts/${account.id}/provider-keys`, { provider: "mockai", key: secret, label: "team key" });
    expect(added.status, added.text).toBe(201);
    expect(added.body.provider_key).toMatchObject({ provider: "mockai", label: "team key", last4: "3456" });
    const listed = await admin.client.get(`/admin/accounts/${account.id}/provider-keys`);
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.providers).toEqual(["mockai", "mockanthropic"]);
    expect(listed.text).not.toContain(secret);
    expect(added.text).not.toContain(secret);
    expectError(await admin.client.post(`/admin/accounts/${account.id}/provider-keys`, { provider: "nope", key: secret }), 400, "invalid_request");
    expectError(await admin.client.post(`/admin/accounts/${account.id}/provider-keys`, { provider: "mockai", key: "short" }), 400, "invalid_request");
    const other = await gateway.createAccount();
    expectError(await admin.client.delete(`/admin/accounts/${other.account.id}/provider-keys/${added.body.provider_key.id}`), 404, "not_found");
    expect((await admin.client.delete(`/admin/accounts/${account.id}/provider-keys/${added.body.provider_key.id}`)).body.deleted).toBe(true);
    expect((await admin.client.get(`/admin/accounts/${account.id}/provider-keys`)).body.data).toEqual([]);
    const audit = await auditOf(added.body.provider_key.id);
    expect(audit.map((row) => row.action)).toEqual(["provider_key.remove", "provider_key.add"]);
    expect(JSON.stringify(audit)).not.toContain(secret);
  });

  it("shows usage across all accounts by account, model and provider", async () => {
    const a = await gateway.createAccount({ email: `usage-a-${kind}@example.com` });
    const b = await gateway.createAccount({ email: `usage-b-${kind}@example.com` });
    for (const raw of [a.raw, a.raw, b.raw]) expect((await chat(raw)).status).toBe(200);
    const usage = (await admin.client.get("/admin/usage?days=7")).body;
    const byEmail = Object.fromEntries(usage.by_account.map((r: { email: string; requests: number; cost_usd: string }) => [r.email, [r.requests, r.cost_usd]]));
    // 1000 input at 1.00/M and 500 output at 2.00/M: 0.002 USD a request.
    expect(byEmail[`usage-a-${kind}@example.com`]).toEqual([2, "0.004"]);
    expect(byEmail[`usage-b-${kind}@example.com`]).toEqual([1, "0.002"]);
    expect(usage.by_model.find((r: { model: string }) => r.model === "gpt-mock").requests).toBeGreaterThanOrEqual(3);
    expect(usage.by_provider.find((r: { provider: string }) => r.provider === "mockai").requests).toBeGreaterThanOrEqual(3);
    expect(usage.totals.requests).toBeGreaterThanOrEqual(3);
    expectError(await admin.client.get("/admin/usage?days=0"), 400, "invalid_request");
  });

  it("refuses every administration route to a non-administrator with 403", async () => {
    const user = await signedInAccount(gateway);
    const id = user.account.id;
    const calls = [
      user.client.get("/admin/accounts"),
      user.client.get(`/admin/accounts/${id}`),
      user.client.patch(`/admin/accounts/${id}`, { tier: "premium" }),
      user.client.post(`/admin/accounts/${id}/credits`, { amount_usd: "1000", reason: "me" }),
      user.client.post(`/admin/accounts/${id}/debits`, { amount_usd: "1", reason: "me" }),
      user.client.get(`/admin/accounts/${id}/ledger`),
      user.client.get(`/admin/accounts/${id}/provider-keys`),
      user.client.post(`/admin/accounts/${id}/provider-keys`, { provider: "mockai", key: "sk-12345678" }),
      user.client.delete(`/admin/accounts/${id}/provider-keys/upk_x`),
      user.client.get("/admin/usage"),
      user.client.get("/admin/upstreams"),
      user.client.get("/admin/audit"),
      user.client.get("/admin/codes"),
      user.client.post("/admin/codes", { value_usd: "5" }),
      user.client.post("/admin/codes/code_x/revoke"),
    ];
    for (const response of await Promise.all(calls)) expectError(response, 403, "forbidden");
    expect((await gateway.app.ctx.store.accounts.get(id))!.balance).toBe(user.account.balance);
  });

  it("the admin API sets and clears an account's limits, audited", async () => {
    const token = (await gateway.app.ctx.store.adminTokens.create({ name: "limits", scopes: ["accounts:write"] })).raw;
    const { account } = await gateway.createAccount();
    const patch = (body: unknown) =>
      fetch(`${gateway.url}/admin/v1/accounts/${account.id}`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const set = await patch({ limits: { tokens_per_minute: 5000 } });
    expect(set.status).toBe(200);
    expect(((await set.json()) as { account: { limits: unknown } }).account.limits).toEqual({ tokens_per_minute: 5000 });
    expect((await gateway.app.ctx.store.accounts.get(account.id))!.limits).not.toBeNull();
    expect((await patch({ limits: { tokens_per_minute: "lots" } })).status).toBe(400);
    expect((await patch({ limits: null })).status).toBe(200);
    expect((await gateway.app.ctx.store.accounts.get(account.id))!.limits).toBeNull();
    expect((await auditOf(account.id)).map((row) => row.action)).toEqual(["account.update", "account.update"]);
  });
});
