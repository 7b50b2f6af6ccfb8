// Spend by workspace and by member (issue 41 item 3) on both databases, after known requests through
// keys of two members in two workspaces and one in none: the account's usage (dashboard and admin API)
// by workspace, a workspace's usage by member, the administrators' report across accounts by workspace
// and by tag, each figure exact.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { ADMIN_SCOPES } from "../../src/admin/scopes.js";
import { formatUsd } from "../../src/core/money.js";
import { signedInAccount, type DashboardClient } from "./support.js";

interface Row {
  requests: number;
  cost_usd: string;
  tokens: number;
  [k: string]: unknown;
}

describe.each(DATABASE_KINDS)("usage by workspace and member on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("hi", { usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } }));
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }), { kind });
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  const chat = async (raw: string, tags?: string) => {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json", ...(tags && { "x-gateway-tags": tags }) },
      body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status, await response.text()).toBe(200);
  };

  async function workspace(owner: DashboardClient, name: string, member: DashboardClient): Promise<string> {
    const id = (await owner.post("/workspaces", { name })).body.workspace.id as string;
    const { token } = (await owner.post(`/workspaces/${id}/invites`, { role: "member" })).body;
    expect((await member.post("/invites/accept", { token })).status).toBe(200);
    return id;
  }

  async function key(client: DashboardClient, name: string, workspaceId?: string): Promise<string> {
    const created = await client.post("/keys", { name, ...(workspaceId && { workspace_id: workspaceId }) });
    expect(created.status, created.text).toBe(201);
    return created.body.raw_key as string;
  }

  it("breaks spend down by workspace, member and tag with exact figures", async () => {
    const owner = await signedInAccount(gateway, { admin: true, balance: "10" });
    const member = await signedInAccount(gateway, { balance: "10" });
    const alpha = await workspace(owner.client, "alpha", member.client);
    const beta = await workspace(owner.client, "beta", member.client);
    const ownerAlpha = await key(owner.client, "owner-alpha", alpha);
    const ownerBeta = await key(owner.client, "owner-beta", beta);
    const ownerLoose = await key(owner.client, "owner-loose");
    const memberAlpha = await key(member.client, "member-alpha", alpha);
    await chat(ownerAlpha, "team=a");
    await chat(ownerAlpha, "team=a");
    await chat(memberAlpha, "team=b");
    await chat(ownerBeta);
    await chat(ownerLoose);

    const costs = await gateway.app.ctx.store.db.selectFrom("ledger").select("cost_nano").where("kind", "=", "usage").execute();
    expect(costs).toHaveLength(5);
    const one = BigInt(costs[0]!.cost_nano);
    expect(one).toBeGreaterThan(0n);
    for (const c of costs) expect(BigInt(c.cost_nano)).toBe(one);
    const figures = (n: number) => ({ requests: n, cost_usd: formatUsd(BigInt(n) * one), tokens: 1500 * n });
    const pick = (rows: Row[], label: string) =>
      rows.map((r) => ({ [label]: r[label], name: r.name, email: r.email, requests: r.requests, cost_usd: r.cost_usd, tokens: r.tokens }));

    // The owner's account: by workspace (keys in none as null; equal costs by id, "" first).
    const byWorkspace = [
      { workspace_id: alpha, name: "alpha", email: undefined, ...figures(2) },
      { workspace_id: null, name: null, email: undefined, ...figures(1) },
      { workspace_id: beta, name: "beta", email: undefined, ...figures(1) },
    ];
    const mine = await owner.client.get("/usage?days=7");
    expect(mine.status).toBe(200);
    expect(pick(mine.body.by_workspace, "workspace_id")).toEqual(byWorkspace);
    expect(pick(mine.body.by_member, "account_id")).toEqual([{ account_id: owner.account.id, name: undefined, email: owner.account.email, ...figures(4) }]);

    const adminToken = (await gateway.app.ctx.store.adminTokens.create({ name: `breakdowns-${kind}`, scopes: [...ADMIN_SCOPES] })).raw;
    const viaApi = await fetch(`${gateway.url}/admin/v1/accounts/${owner.account.id}/usage?days=7`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(viaApi.status).toBe(200);
    expect(pick(((await viaApi.json()) as { by_workspace: Row[] }).by_workspace, "workspace_id")).toEqual(byWorkspace);

    // The ledger CSV names each row's workspace (the key's).
    const csv = (await owner.client.get("/ledger.csv")).text.trim().split("\r\n");
    const column = csv[0]!.split(",").indexOf("workspace_id");
    expect(column).toBe(5);
    const cells = csv.slice(1).map((line) => line.split(",")[column]);
    expect([cells.filter((c) => c === alpha).length, cells.filter((c) => c === beta).length]).toEqual([2, 1]);

    // A workspace's usage by member: the keys' owners, read by any member.
    const alphaUsage = await member.client.get(`/workspaces/${alpha}/usage?days=7`);
    expect(alphaUsage.status).toBe(200);
    expect(pick(alphaUsage.body.by_member, "account_id")).toEqual([
      { account_id: owner.account.id, name: undefined, email: owner.account.email, ...figures(2) },
      { account_id: member.account.id, name: undefined, email: member.account.email, ...figures(1) },
    ]);
    expect(pick(alphaUsage.body.by_workspace, "workspace_id")).toEqual([{ workspace_id: alpha, name: "alpha", email: undefined, ...figures(3) }]);
    const betaUsage = await owner.client.get(`/workspaces/${beta}/usage?days=7`);
    expect(pick(betaUsage.body.by_member, "account_id")).toEqual([{ account_id: owner.account.id, name: undefined, email: owner.account.email, ...figures(1) }]);

    // The administrators' report across every account: by workspace and by tag.
    const report = await owner.client.get("/admin/usage?days=7");
    expect(report.status).toBe(200);
    expect(report.body.totals).toMatchObject(figures(5));
    expect(pick(report.body.by_workspace, "workspace_id")).toEqual([
      { workspace_id: alpha, name: "alpha", email: undefined, ...figures(3) },
      { workspace_id: null, name: null, email: undefined, ...figures(1) },
      { workspace_id: beta, name: "beta", email: undefined, ...figures(1) },
    ]);
    expect(report.body.by_tag).toEqual([
      { tag: "team=a", ...figures(2) },
      { tag: "team=b", ...figures(1) },
    ]);
  });
});
