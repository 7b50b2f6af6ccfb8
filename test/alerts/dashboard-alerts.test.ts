// The dashboard's alerts API (ADR 0040): a workspace's owner manages the workspace's subscriptions,
// its members and outsiders cannot (403 / 404), another workspace's subscription is not reachable
// through it, administrators manage the operator's; a workspace event reaches the workspace's
// subscription and not another workspace's; the spend report downloads as CSV.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { expectError, signedInAccount } from "../dashboard/support.js";
import { alertsConfig, startReceiver, waitFor, type Receiver } from "./support.js";

describe.each(DATABASE_KINDS)("dashboard alerts on %s", (kind) => {
  let gateway: TestGateway;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    gateway = await startGateway(mockConfig({ openaiUrl: "http://127.0.0.1:9", extra: alertsConfig() }), { kind });
  });
  afterAll(async () => {
    await gateway?.close();
    await receiver?.close();
  });

  it("keeps each workspace's subscriptions to its owner and routes its events to them only", async () => {
    const { account: owner, client: ownerDash } = await signedInAccount(gateway);
    const { account: member, client: memberDash } = await signedInAccount(gateway);
    const { client: outsider } = await signedInAccount(gateway);
    const { client: adminDash } = await signedInAccount(gateway, { admin: true });
    const store = gateway.app.ctx.store;
    const team = await store.workspaces.create("team", owner.id);
    await store.workspaces.addMember(team.id, member.id, "admin");
    const other = await store.workspaces.create("other", member.id);

    const base = `/workspaces/${team.id}/alerts`;
    const created = await ownerDash.post(base, { url: receiver.url, events: ["budget.threshold"] });
    expect(created.status, created.text).toBe(201);
    expect(created.body.subscription.workspace_id).toBe(team.id);
    expectError(await memberDash.post(base, { url: receiver.url, events: ["test"] }), 403, "forbidden");
    expectError(await memberDash.get(base), 403, "forbidden");
    expectError(await outsider.get(base), 404, "not_found");
    // The other workspace's owner does not reach this subscription through their workspace.
    const otherBase = `/workspaces/${other.id}/alerts`;
    expectError(await memberDash.delete(`${otherBase}/${created.body.subscription.id}`), 404, "not_found");
    const operator = await adminDash.post("/admin/alerts", { url: receiver.url, events: ["budget.threshold"] });
    expect(operator.status).toBe(201);
    expect(operator.body.subscription.workspace_id).toBeNull();
    expectError(await ownerDash.get("/admin/alerts"), 403, "forbidden");
    const otherSub = await memberDash.post(otherBase, { url: receiver.url, events: ["budget.threshold"] });
    expect(otherSub.status).toBe(201);

    // A workspace's event: its subscription and the operator's receive it, the other workspace's not.
    await store.alerts.record({ type: "budget.threshold", dedupKey: `t:${team.id}`, workspaceId: team.id, data: { scope: `workspace:${team.id}` } });
    await waitFor("both deliveries", () => receiver.received.filter((r) => r.body.includes(`workspace:${team.id}`)).length >= 2);
    const deliveries = async (client: typeof ownerDash, path: string) => (await client.get(`${path}/deliveries`)).body.data as unknown[];
    expect(await deliveries(ownerDash, `${base}/${created.body.subscription.id}`)).toHaveLength(1);
    expect(await deliveries(adminDash, `/admin/alerts/${operator.body.subscription.id}`)).toHaveLength(1);
    expect(await deliveries(memberDash, `${otherBase}/${otherSub.body.subscription.id}`)).toHaveLength(0);

    const csv = await ownerDash.get(`/reports/spend?format=csv&period=weekly&workspace_id=${team.id}`);
    expect(csv.status).toBe(200);
    expect(csv.text.split("\n")[0]).toBe("section,name,spend_usd,requests");
    expectError(await outsider.get(`/reports/spend?workspace_id=${team.id}`), 404, "not_found");
  });
});
