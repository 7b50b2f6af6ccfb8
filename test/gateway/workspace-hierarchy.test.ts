// The budget hierarchy made visible (issue 41 item 4), on both databases: administrators list every
// workspace with its budget, spend, held and what is left (admin API, paged and scoped; the dashboard's
// Teams list) and read any workspace's page without changing it; /v1/me lists every budget that
// applies to the calling key (account, key caps, periodic budget, workspace, member) with what is left.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { formatUsd } from "../../src/core/money.js";
import { expectError, signedInAccount } from "../dashboard/support.js";

interface Answer {
  status: number;
  body: any;
}

async function call(gateway: TestGateway, method: string, path: string, raw: string, body?: object): Promise<Answer> {
  const response = await fetch(new URL(path, gateway.url), {
    method,
    headers: { authorization: `Bearer ${raw}`, ...(body && { "content-type": "application/json" }) },
    ...(body && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

const chat = { model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], max_tokens: 100 };

describe.each(DATABASE_KINDS)("the budget hierarchy, visible, on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  const clock = { ms: Date.parse("2026-05-14T12:00:00Z") };

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = async (_req, res) => json(res, 200, chatCompletion("ok", { usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 } }));
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }), { kind, now: () => clock.ms });
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it("GET /admin/v1/workspaces lists every workspace a page at a time with budget, spend, held, left and members; scoped", async () => {
    const store = gateway.app.ctx.store;
    const { account: owner } = await gateway.createAccount({ balance: "10" });
    const { account: other } = await gateway.createAccount({ balance: "10" });
    const atlas = await store.workspaces.create("Atlas", owner.id);
    await store.workspaces.addMember(atlas.id, other.id, "member");
    const borealis = await store.workspaces.create("Borealis", other.id);
    const cygnus = await store.workspaces.create("Cygnus", owner.id);
    // Oldest first: created a second apart (three creations may share a millisecond).
    for (const [i, ws] of [atlas, borealis, cygnus].entries())
      await store.db
        .updateTable("workspaces")
        .set({ created_at: BigInt(1_700_000_000_000 + i * 1000) })
        .where("id", "=", ws.id)
        .execute();
    await store.workspaceBudgets.setPolicy(atlas.id, {
      monthlyBudget: 2_000_000_000n,
      monthlyTokenBudget: 100_000n,
      memberMonthlyBudget: 500_000_000n,
      allowedModels: ["gpt-mock"],
    });
    const { key, raw } = await store.keys.create({ accountId: other.id, workspaceId: atlas.id });
    expect((await call(gateway, "POST", "/v1/chat/completions", raw, chat)).status).toBe(200);
    const spent = (await store.db.selectFrom("ledger").select("cost_nano").where("key_id", "=", key.id).executeTakeFirstOrThrow()).cost_nano;
    expect(BigInt(spent)).toBeGreaterThan(0n);

    const { raw: reader } = await store.adminTokens.create({ name: `reader-${kind}`, scopes: ["workspaces:read"] });
    const first = await call(gateway, "GET", "/admin/v1/workspaces?limit=2", reader);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: "list", month: "2026-05", resets_at: "2026-06-01T00:00:00.000Z", has_more: true });
    expect(first.body.data.map((w: { name: string }) => w.name)).toEqual(["Atlas", "Borealis"]);
    expect(first.body.data[0]).toMatchObject({
      id: atlas.id,
      members: 2,
      allowed_models: ["gpt-mock"],
      member_monthly_budget_usd: "0.50",
      budget: {
        usd: "2.00",
        tokens: 100_000,
        spent_usd: formatUsd(BigInt(spent)),
        tokens_used: 1100,
        held_usd: "0.00",
        remaining_usd: formatUsd(2_000_000_000n - BigInt(spent)),
        remaining_tokens: 98_900,
      },
    });
    expect(first.body.data[1]).toMatchObject({ id: borealis.id, members: 1, budget: { usd: null, spent_usd: "0.00", remaining_usd: null } });
    const second = await call(gateway, "GET", `/admin/v1/workspaces?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`, reader);
    expect(second.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(second.body.data.map((w: { id: string }) => w.id)).toEqual([cygnus.id]);

    // Hostile input and the scope.
    expect((await call(gateway, "GET", "/admin/v1/workspaces?cursor=bm90IGEgY3Vyc29y", reader)).status).toBe(400);
    expect((await call(gateway, "GET", "/admin/v1/workspaces?limit=501", reader)).status).toBe(400);
    const { raw: accountsOnly } = await store.adminTokens.create({ name: `accounts-${kind}`, scopes: ["accounts:read"] });
    expect((await call(gateway, "GET", "/admin/v1/workspaces", accountsOnly)).status).toBe(403);
  });

  it("/v1/me lists every budget that applies to the key with what is left, in admission's order", async () => {
    const store = gateway.app.ctx.store;
    const { account } = await gateway.createAccount({ balance: "10" });
    await store.db.updateTable("accounts").set({ monthly_budget_nano: 3_000_000_000n, monthly_token_budget: 50_000n }).where("id", "=", account.id).execute();
    const team = await store.workspaces.create("Dorado", account.id);
    await store.workspaceBudgets.setPolicy(team.id, { monthlyBudget: 1_000_000_000n, memberMonthlyBudget: 400_000_000n });
    const { key, raw } = await store.keys.create({ accountId: account.id, workspaceId: team.id, budgetCap: 2_000_000_000n, tokenCap: 40_000 });
    await store.db.updateTable("keys").set({ period: "day", period_budget_nano: 700_000_000n }).where("id", "=", key.id).execute();
    expect((await call(gateway, "POST", "/v1/chat/completions", raw, chat)).status).toBe(200);
    const cost = BigInt((await store.db.selectFrom("ledger").select("cost_nano").where("key_id", "=", key.id).executeTakeFirstOrThrow()).cost_nano);
    const left = (limit: bigint) => formatUsd(limit - cost);

    const me = await call(gateway, "GET", "/v1/me", raw);
    expect(me.status).toBe(200);
    expect(me.body.budgets.map((b: { level: string }) => b.level)).toEqual(["account", "key", "key_period", "workspace", "member"]);
    const [acct, keyCap, daily, workspace, member] = me.body.budgets;
    expect(acct).toMatchObject({
      code: "monthly_budget_exceeded",
      resets_at: "2026-06-01T00:00:00.000Z",
      usd: "3.00",
      tokens: 50_000,
      tokens_used: 1100,
      remaining_usd: left(3_000_000_000n),
      remaining_tokens: 48_900,
    });
    expect(keyCap).toMatchObject({ code: "key_budget_exceeded", resets_at: null, usd: "2.00", tokens: 40_000, remaining_usd: left(2_000_000_000n), remaining_tokens: 38_900 });
    expect(daily).toMatchObject({
      code: "key_period_budget_exceeded",
      resets_at: "2026-05-15T00:00:00.000Z",
      usd: "0.70",
      tokens: null,
      remaining_usd: left(700_000_000n),
      remaining_tokens: null,
    });
    expect(workspace).toMatchObject({ code: "workspace_budget_exceeded", usd: "1.00", remaining_usd: left(1_000_000_000n) });
    expect(member).toMatchObject({ code: "member_budget_exceeded", usd: "0.40", remaining_usd: left(400_000_000n), spent_usd: formatUsd(cost) });

    // A key with no limits anywhere: no budget applies.
    const { account: free } = await gateway.createAccount({ balance: "1" });
    const { raw: plain } = await store.keys.create({ accountId: free.id });
    expect((await call(gateway, "GET", "/v1/me", plain)).body.budgets).toEqual([]);
  });

  it("dashboard administrators list every team and read any workspace's page, read-only; others get 404", async () => {
    const owner = await signedInAccount(gateway);
    const outsider = await signedInAccount(gateway);
    const admin = await signedInAccount(gateway, { admin: true });
    const created = await owner.client.post("/workspaces", { name: "Eridanus" });
    const ws = created.body.workspace.id as string;

    const list = await admin.client.get("/admin/workspaces?limit=500");
    expect(list.status, list.text).toBe(200);
    expect(list.body.data.find((w: { id: string }) => w.id === ws)).toMatchObject({ name: "Eridanus", members: 1, budget: { usd: null } });
    expectError(await outsider.client.get("/admin/workspaces"), 403, "forbidden");

    for (const path of ["", "/keys", "/budgets", "/usage"]) {
      expect((await admin.client.get(`/workspaces/${ws}${path}`)).status, path).toBe(200);
      expectError(await outsider.client.get(`/workspaces/${ws}${path}`), 404, "not_found");
    }
    expect((await admin.client.get(`/workspaces/${ws}`)).body).toMatchObject({ role: null, members: [expect.objectContaining({ account_id: owner.account.id })] });
    // Reading is not changing: the administrator is refused every write of a workspace it is not in.
    expectError(await admin.client.patch(`/workspaces/${ws}/budgets`, { monthly_budget_usd: "1" }), 403, "forbidden");
    expectError(await admin.client.post(`/workspaces/${ws}/invites`, { role: "member" }), 403, "forbidden");
    expectError(await admin.client.delete(`/workspaces/${ws}/members/${owner.account.id}`), 403, "forbidden");
    expectError(await admin.client.get(`/workspaces/${ws}/invites`), 403, "forbidden");
    expectError(await admin.client.get(`/workspaces/ws_missing`), 404, "not_found");
    const memberships = await gateway.app.ctx.store.workspaces.members(ws);
    expect(memberships.map((m) => m.accountId)).toEqual([owner.account.id]);
    expect((await gateway.app.ctx.store.workspaceBudgets.policy(ws))?.monthlyBudget).toBeNull();
  });
});
