// Administrators suspend, close and restore accounts (their keys are refused at once with 402
// account_suspended, then work again); usage views, ledger pagination and CSV after real gateway calls.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { expectError, signedInAccount, type DashboardClient } from "./support.js";

describe.each(DATABASE_KINDS)("dashboard admin and usage on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let admin: { client: DashboardClient; account: { id: string } };

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("hi", { usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } }));
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }), { kind });
    admin = await signedInAccount(gateway, { admin: true });
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  const chat = (raw: string, model = "gpt-mock") =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
    });

  it.each(["suspended", "closed"])("an administrator sets %s: the account's keys get 402 at once; active restores them", async (status) => {
    const user = await signedInAccount(gateway);
    const created = (await user.client.post("/keys", { name: "work" })).body;
    expect((await chat(created.raw_key)).status).toBe(200); // cached by the auth cache now
    const changed = await admin.client.patch(`/admin/accounts/${user.account.id}`, { status });
    expect(changed.body.account.status).toBe(status);
    const refused = await chat(created.raw_key);
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as { error: { type: string } }).error.type).toBe("account_suspended");
    // Dashboard writes by the account are refused too; reads still work so it can see why.
    expectError(await user.client.post("/keys", {}), 402, "account_suspended");
    expect((await user.client.get("/keys")).status).toBe(200);
    await admin.client.patch(`/admin/accounts/${user.account.id}`, { status: "active" });
    expect((await chat(created.raw_key)).status).toBe(200);
  });

  it("an administrator turns an account's clamping off and on; an administrator may change their own", async () => {
    const user = await signedInAccount(gateway);
    expect((await admin.client.get("/admin/accounts")).body.data.find((a: { id: string }) => a.id === user.account.id).clamp_output).toBe(true);
    const off = await admin.client.patch(`/admin/accounts/${user.account.id}`, { clamp_output: false });
    expect(off.status, off.text).toBe(200);
    expect(off.body.account.clamp_output).toBe(false);
    expect((await gateway.app.ctx.store.accounts.get(user.account.id))!.clampOutput).toBe(false);
    expect((await admin.client.patch(`/admin/accounts/${user.account.id}`, { clamp_output: true })).body.account.clamp_output).toBe(true);
    expect((await admin.client.patch(`/admin/accounts/${admin.account.id}`, { clamp_output: false })).body.account.clamp_output).toBe(false);
    expect((await admin.client.patch(`/admin/accounts/${admin.account.id}`, { clamp_output: true })).body.account.clamp_output).toBe(true);
    expectError(await user.client.patch(`/admin/accounts/${user.account.id}`, { clamp_output: false }), 403, "forbidden");
    expectError(await admin.client.patch(`/admin/accounts/${user.account.id}`, { clamp_output: "off" }), 400, "invalid_request");
  });

  it("lists accounts for administrators only; non-admins get 403 forbidden", async () => {
    const user = await signedInAccount(gateway);
    const list = await admin.client.get("/admin/accounts");
    expect(list.status).toBe(200);
    expect(list.body.data.map((a: { id: string }) => a.id)).toContain(user.account.id);
    expect(list.text).not.toContain("scrypt$");
    expectError(await user.client.get("/admin/accounts"), 403, "forbidden");
    expectError(await user.client.patch(`/admin/accounts/${admin.account.id}`, { status: "suspended" }), 403, "forbidden");
    expectError(await admin.client.patch(`/admin/accounts/${admin.account.id}`, { status: "suspended" }), 400, "invalid_request");
    expectError(await admin.client.patch("/admin/accounts/acct_missing", { status: "active" }), 404, "not_found");
    expectError(await admin.client.patch(`/admin/accounts/${user.account.id}`, { status: "frozen" }), 400, "invalid_request");
    // Granting admin lets the account manage accounts too.
    await admin.client.patch(`/admin/accounts/${user.account.id}`, { is_admin: true });
    expect((await user.client.get("/admin/accounts")).status).toBe(200);
  });

  it("shows balance and usage by day, key and model after gateway calls; another account sees none of it", async () => {
    const user = await signedInAccount(gateway, { balance: "10" });
    const a = (await user.client.post("/keys", { name: "alpha" })).body;
    const b = (await user.client.post("/keys", { name: "beta" })).body;
    expect((await chat(a.raw_key)).status).toBe(200);
    expect((await chat(a.raw_key)).status).toBe(200);
    expect((await chat(b.raw_key, "claude-mock")).status).toBeGreaterThanOrEqual(200); // a different model, whatever its outcome
    const usage = await user.client.get("/usage?days=7");
    expect(usage.status).toBe(200);
    expect(usage.body.by_day).toHaveLength(7);
    const today = new Date().toISOString().slice(0, 10);
    expect(usage.body.by_day.at(-1)).toMatchObject({ day: today });
    expect(usage.body.by_day.at(-1).requests).toBe(usage.body.totals.requests);
    const alpha = usage.body.by_key.find((k: { name: string }) => k.name === "alpha");
    // 1000 input at $1/M + 500 output at $2/M = 0.002 per call.
    expect(alpha).toMatchObject({ requests: 2, input_tokens: 2000, output_tokens: 1000, tokens: 3000, cost_usd: "0.004" });
    expect(usage.body.by_model.find((m: { model: string }) => m.model === "gpt-mock")).toMatchObject({ requests: 2 });
    expect(Number(usage.body.balance.balance_usd)).toBeLessThan(10);

    const stranger = await signedInAccount(gateway);
    const theirs = await stranger.client.get("/usage");
    expect(theirs.body.totals.requests).toBe(0);
    // Their own ledger holds only their opening balance's credit row.
    const theirLedger = (await stranger.client.get("/ledger")).body.data;
    expect(theirLedger.map((r: { kind: string }) => r.kind)).toEqual(["credit"]);
    expect((await stranger.client.get("/ledger.csv")).text.trim().split("\r\n")).toHaveLength(2);
  });

  it("pages through the ledger and exports it as CSV", async () => {
    const user = await signedInAccount(gateway, { balance: "10" });
    const key = (await user.client.post("/keys", { name: "=cmd|evil" })).body;
    // Four charges and the opening balance's credit: five rows.
    for (let i = 0; i < 4; i++) expect((await chat(key.raw_key)).status).toBe(200);
    const first = await user.client.get("/ledger?limit=2");
    expect(first.body.data).toHaveLength(2);
    const second = await user.client.get(`/ledger?limit=2&before=${first.body.next_before}`);
    const third = await user.client.get(`/ledger?limit=2&before=${second.body.next_before}`);
    expect(third.body.next_before).toBeNull();
    const ids = [...first.body.data, ...second.body.data, ...third.body.data].map((r: { id: string }) => Number(r.id));
    expect(ids).toHaveLength(5);
    expect([...ids].sort((x, y) => y - x)).toEqual(ids);
    expect(first.body.data[0]).toMatchObject({ kind: "usage", key_name: "=cmd|evil", model: "gpt-mock", cost_usd: "0.002" });
    expect(third.body.data[0]).toMatchObject({ kind: "credit" });
    expect(Number(third.body.data[0].cost_usd)).toBe(10);
    expectError(await user.client.get("/ledger?limit=0"), 400, "invalid_request");
    expectError(await user.client.get("/ledger?before=abc"), 400, "invalid_request");

    const csv = await user.client.get("/ledger.csv");
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(csv.headers.get("content-disposition")).toMatch(/^attachment; filename="ledger-\d{4}-\d{2}-\d{2}\.csv"$/);
    const lines = csv.text.trim().split("\r\n");
    expect(lines[0]).toBe(
      "id,created_at,kind,key_id,key_name,workspace_id,request_id,model,provider,route,deployment,input_tokens,cached_tokens,output_tokens,reasoning_tokens,cost_usd,estimated,note,price_factor," +
        "cache_write_5m_tokens,cache_write_1h_tokens,web_search_calls,images,video_seconds," +
        "input_cost_usd,cached_input_cost_usd,cache_write_5m_cost_usd,cache_write_1h_cost_usd,output_cost_usd,web_search_cost_usd,request_cost_usd,image_cost_usd,video_second_cost_usd,cache_saving_usd,tags",
    );
    expect(lines).toHaveLength(6);
    // A spreadsheet must not run a key name as a formula.
    expect(lines[1]).toContain(",'=cmd|evil,");
  });
});
