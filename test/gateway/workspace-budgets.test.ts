// A workspace's budgets and models through the gateway (ADR 0037), on both databases: the member budget
// and the allowed-models list each refusing with its own code, a budget equal to the spend refusing,
// the month rolling over on the gateway's clock, /v1/me showing what is left, and a change made through
// the admin API applying to keys already cached, audited with before and after.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { ADMIN_SCOPES } from "../../src/admin/scopes.js";
import { waitFor } from "../cli/gateway-process.js";

interface Answer {
  status: number;
  requestId: string | null;
  body: { error?: { type: string; code?: string; message: string }; [k: string]: unknown };
}

async function call(gateway: TestGateway, method: string, path: string, raw: string, body?: object): Promise<Answer> {
  const response = await fetch(new URL(path, gateway.url), {
    method,
    headers: { authorization: `Bearer ${raw}`, ...(body && { "content-type": "application/json" }) },
    ...(body && { body: JSON.stringify(body) }),
  });
  return { status: response.status, requestId: response.headers.get("x-request-id"), body: (await response.json()) as Answer["body"] };
}

const chat = (model = "gpt-mock") => ({ model, messages: [{ role: "user", content: "Hi" }], max_tokens: 100 });

describe.each(DATABASE_KINDS)("workspace budgets through the gateway on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  const clock = { ms: Date.parse("2026-05-31T23:00:00Z") };

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = async (_req, res) => json(res, 200, chatCompletion("ok", { usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 } }));
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }), { kind, now: () => clock.ms });
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  async function member(workspaceId: string | null) {
    const { account } = await gateway.createAccount({ balance: "10" });
    const { key, raw } = await gateway.app.ctx.store.keys.create({ accountId: account.id, workspaceId });
    return { account, key, raw };
  }

  it("a member budget refuses with member_budget_exceeded and its figures; the spend equal to the budget refuses; the month rolls over", async () => {
    const store = gateway.app.ctx.store;
    const owner = await member(null);
    const team = await store.workspaces.create("Team A", owner.account.id);
    const alice = await member(team.id);
    await store.workspaces.addMember(team.id, alice.account.id, "member");
    const first = await call(gateway, "POST", "/v1/chat/completions", alice.raw, chat());
    expect(first.status).toBe(200);
    // The member budget is exactly what was spent: the next request is refused.
    const spent = (await store.db.selectFrom("ledger").select("cost_nano").where("key_id", "=", alice.key.id).executeTakeFirstOrThrow()).cost_nano;
    await store.workspaceBudgets.setPolicy(team.id, { memberMonthlyBudget: spent });
    await waitFor(
      async () => (await call(gateway, "POST", "/v1/chat/completions", alice.raw, chat())).status === 402,
      5000,
      () => "the member budget never applied",
    );
    const refused = await call(gateway, "POST", "/v1/chat/completions", alice.raw, chat());
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatchObject({ type: "member_budget_exceeded", code: "member_budget_exceeded" });
    expect(refused.body.error?.message).toMatch(/your monthly budget as a member of this workspace\. In 2026-05 \(UTC\) the budget is .* USD with .* USD spent/);
    expect(refused.requestId).toMatch(/^req_/);
    // /v1/me: the member budget is used up, the workspace has none.
    const me = await call(gateway, "GET", "/v1/me", alice.raw);
    expect(me.body.workspace).toMatchObject({
      id: team.id,
      name: "Team A",
      month: "2026-05",
      resets_at: "2026-06-01T00:00:00.000Z",
      budget: { usd: null, remaining_usd: null },
      member_budget: { remaining_usd: "0.00", held_usd: "0.00" },
    });
    // A new month: the budget is whole again.
    clock.ms = Date.parse("2026-06-01T00:00:01Z");
    expect((await call(gateway, "POST", "/v1/chat/completions", alice.raw, chat())).status).toBe(200);
    const after = await call(gateway, "GET", "/v1/me", alice.raw);
    expect(after.body.workspace).toMatchObject({ month: "2026-06", member_budget: { remaining_usd: "0.00" } });
    expect((await call(gateway, "POST", "/v1/chat/completions", alice.raw, chat())).body.error?.code).toBe("member_budget_exceeded");
  });

  it("an allowed-models list set through the admin API refuses other models with the workspace's code, audited", async () => {
    const store = gateway.app.ctx.store;
    const owner = await member(null);
    const team = await store.workspaces.create("Team B", owner.account.id);
    const bob = await member(team.id);
    expect((await call(gateway, "POST", "/v1/chat/completions", bob.raw, chat("claude-mock"))).status).not.toBe(403);
    const { raw: adminToken } = await store.adminTokens.create({ name: `ws-${kind}`, scopes: [...ADMIN_SCOPES] });
    const patched = await call(gateway, "PATCH", `/admin/v1/workspaces/${team.id}/budgets`, adminToken, { allowed_models: ["gpt-mock"], monthly_budget_usd: "5" });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ allowed_models: ["gpt-mock"], budget: { usd: "5.00" } });
    // Applies to the key already cached in this process (the change drops it through auth_events).
    const refused = await call(gateway, "POST", "/v1/chat/completions", bob.raw, chat("claude-mock"));
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ type: "forbidden", code: "model_not_allowed_for_workspace" });
    expect(refused.body.error?.message).toContain("Team B");
    expect((await call(gateway, "POST", "/v1/chat/completions", bob.raw, chat())).status).toBe(200);
    const models = await call(gateway, "GET", "/v1/models", bob.raw);
    expect((models.body.data as Array<{ id: string }>).map((m) => m.id)).toEqual(["gpt-mock"]);
    const audit = await store.db.selectFrom("audit_log").selectAll().where("action", "=", "workspace.budgets").where("target_id", "=", team.id).execute();
    expect(audit).toHaveLength(1);
    expect(JSON.parse(audit[0]!.before!)).toMatchObject({ allowed_models: null, monthly_budget_usd: null });
    expect(JSON.parse(audit[0]!.after!)).toMatchObject({ allowed_models: ["gpt-mock"], monthly_budget_usd: "5.00" });
    // Hostile input is refused with the field named.
    const bad = await call(gateway, "PATCH", `/admin/v1/workspaces/${team.id}/budgets`, adminToken, { allowed_models: ["no-such-model"] });
    expect(bad.status).toBe(400);
    expect(bad.body.error?.message).toMatch(/allowed_models: the model no-such-model does not exist/);
    expect((await call(gateway, "PATCH", `/admin/v1/workspaces/${team.id}/budgets`, adminToken, { monthly_budget_usd: "-1" })).status).toBe(400);
    expect((await call(gateway, "PATCH", `/admin/v1/workspaces/${team.id}/budgets`, adminToken, { surprise: 1 })).status).toBe(400);
    expect((await call(gateway, "GET", `/admin/v1/workspaces/ws_nope/budgets`, adminToken)).status).toBe(404);
  });
});
