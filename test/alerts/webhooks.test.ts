// Alerts by webhook end to end on both databases (ADR 0040): subscriptions through the admin API, the
// test event signed and delivered to a local receiver, retries after 500s and after timeouts recorded
// attempt by attempt, the Slack format's shape, endpoint validation, the credit event from a
// redemption-code-style credit, and a config change's event from the audited reload.
import { readFileSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_SCOPES } from "../../src/admin/scopes.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { alertsConfig, signatureValid, startReceiver, waitFor, type Receiver } from "./support.js";

describe.each(DATABASE_KINDS)("alert webhooks on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let receiver: Receiver;
  let token: string;

  async function admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const response = await fetch(`${gateway.url}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }

  async function subscribe(body: Record<string, unknown>): Promise<{ id: string; secret: string }> {
    const created = await admin("POST", "/alerts/subscriptions", { url: receiver.url, ...body });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return { id: created.body.subscription.id, secret: created.body.secret };
  }

  const deliveries = async (id: string) => (await admin("GET", `/alerts/subscriptions/${id}/deliveries`)).body.data as any[];

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("hi", { usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } }));
    receiver = await startReceiver();
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, extra: alertsConfig({ timeoutMs: 300, maxAttempts: 3 }) }), { kind });
    token = (await gateway.app.ctx.store.adminTokens.create({ name: "alerts", scopes: ADMIN_SCOPES })).raw;
  });
  afterAll(async () => {
    await gateway?.close();
    await receiver?.close();
    await mock?.close();
  });

  it("signs and delivers the test event once, and records the delivery", async () => {
    receiver.answer = () => 200;
    const { id, secret } = await subscribe({ format: "json", events: ["test"] });
    expect(secret).toMatch(/^whsec_[0-9a-f]{48}$/);
    // The secret is shown once: the list never carries it.
    expect(JSON.stringify((await admin("GET", "/alerts/subscriptions")).body)).not.toContain(secret);
    const before = receiver.received.length;
    const sent = await admin("POST", `/alerts/subscriptions/${id}/test`);
    expect(sent.status).toBe(202);
    const delivery = await waitFor("the test delivery", async () => (await deliveries(id)).find((d) => d.status === "delivered"));
    expect(delivery).toMatchObject({ event_id: sent.body.event_id, event_type: "test", attempts: 1, last_status: 200, last_error: null });
    const got = receiver.received.slice(before);
    expect(got).toHaveLength(1);
    const body = JSON.parse(got[0]!.body);
    expect(body).toMatchObject({ id: sent.body.event_id, type: "test", data: { subscription_id: id } });
    expect(got[0]!.headers["x-gateway-event"]).toBe("test");
    expect(signatureValid(secret, got[0]!.headers["x-gateway-signature"] as string, got[0]!.body)).toBe(true);
    expect(signatureValid("whsec_other", got[0]!.headers["x-gateway-signature"] as string, got[0]!.body)).toBe(false);
    await admin("DELETE", `/alerts/subscriptions/${id}`);
  });

  it("retries after 500s with backoff and records every attempt", async () => {
    const { id } = await subscribe({ format: "json", events: ["test"] });
    let failures = 0;
    receiver.answer = (r) => (JSON.parse(r.body).data?.subscription_id === id && failures++ < 2 ? 500 : 200);
    await admin("POST", `/alerts/subscriptions/${id}/test`);
    const delivery = await waitFor("the retried delivery", async () => (await deliveries(id)).find((d) => d.status === "delivered"));
    expect(delivery).toMatchObject({ attempts: 3, last_status: 200 });
    const mine = receiver.received.filter((r) => JSON.parse(r.body).data?.subscription_id === id);
    expect(mine).toHaveLength(3);
    // The same event each time, a later attempt after the backoff.
    expect(new Set(mine.map((r) => JSON.parse(r.body).id)).size).toBe(1);
    expect(mine[2]!.at - mine[1]!.at).toBeGreaterThanOrEqual(90);
    await admin("DELETE", `/alerts/subscriptions/${id}`);
  });

  it("gives up after max_attempts timeouts, recording each, without holding requests", async () => {
    const { id } = await subscribe({ format: "json", events: ["test"] });
    receiver.answer = (r) => (JSON.parse(r.body).data?.subscription_id === id ? "hang" : 200);
    await admin("POST", `/alerts/subscriptions/${id}/test`);
    const failed = await waitFor("the failed delivery", async () => (await deliveries(id)).find((d) => d.status === "failed"));
    expect(failed.attempts).toBe(3);
    expect(failed.last_status).toBeNull();
    expect(failed.last_error).toContain("no answer within 300 ms");
    await admin("DELETE", `/alerts/subscriptions/${id}`);
  });

  it("sends Slack's {text} and reports a credit and a config change", async () => {
    receiver.answer = () => 200;
    const { id } = await subscribe({ format: "slack", events: ["credit.added", "config.changed"] });
    const before = receiver.received.length;
    const { account } = await gateway.createAccount({ balance: "1" });
    await gateway.app.ctx.store.accounts.adjustBalance(account.id, 2_500_000_000n, "promo");
    await waitFor("the credit message", () => receiver.received.slice(before).find((r) => r.body.includes(account.id)));
    const slack = receiver.received.slice(before).find((r) => r.body.includes(account.id))!;
    const parsed = JSON.parse(slack.body);
    expect(Object.keys(parsed)).toEqual(["text"]);
    expect(parsed.text).toContain("credited USD 2.50");
    // A reload that changes a price is audited, and its config.changed event commits with the audit row.
    writeFileSync(gateway.configPath, readFileSync(gateway.configPath, "utf8").replace('input_per_mtok: "10"', 'input_per_mtok: "11"'));
    const reload = await admin("POST", "/config/reload", {});
    expect(reload.status, JSON.stringify(reload.body)).toBe(200);
    const change = await waitFor("the config message", () => receiver.received.slice(before).find((r) => r.body.includes("Config changed")));
    expect(JSON.parse(change.body).text).toMatch(/^:gear: Config changed to version \S+/);
    expect((await deliveries(id)).map((d) => d.event_type).sort()).toEqual(["config.changed", "credit.added"]);
    await admin("DELETE", `/alerts/subscriptions/${id}`);
  });

  it("reports a tag budget's crossing like any budget scope", async () => {
    const store = gateway.app.ctx.store;
    const { account, key } = await gateway.createAccount({ balance: "1" });
    const scope = "tag:project=atlas";
    const month = new Date().toISOString().slice(0, 7);
    const now = BigInt(Date.now());
    await store.db
      .insertInto("tag_budgets")
      .values({ scope, tag: "project=atlas", account_id: null, monthly_budget_nano: 1_000n, monthly_token_budget: null, created_at: now, updated_at: now })
      .execute();
    await store.db.insertInto("budget_usage").values({ scope, month, cost_nano: 850n, tokens: 10n, held_nano: 0n, held_tokens: 0n }).execute();
    await subscribe({ format: "json", events: ["budget.threshold"] });
    const watcher = gateway.app.alerting.watcher;
    await watcher.refreshActive();
    watcher.notice({ accountId: account.id, keyId: key.id, budgets: [scope] });
    watcher.notice({ accountId: account.id, keyId: key.id, budgets: [scope] });
    await watcher.flush();
    const events = await store.db.selectFrom("alert_events").select(["dedup_key"]).where("dedup_key", "like", `budget:${scope}:%`).execute();
    expect(events.map((e) => e.dedup_key).sort()).toEqual([`budget:${scope}:USD:${month}:1000:50`, `budget:${scope}:USD:${month}:1000:80`]);
  });

  it("refuses an endpoint that is not https or an allowed http host, and unknown events", async () => {
    for (const url of ["http://10.0.0.1/hook", "ftp://127.0.0.1/x", "https://user:pw@example.com/", "not a url", `https://example.com/${"a".repeat(2100)}`]) {
      const refused = await admin("POST", "/alerts/subscriptions", { url, events: ["test"] });
      expect(refused.status, url).toBe(400);
      expect(refused.body.error.type).toBe("invalid_request");
    }
    expect((await admin("POST", "/alerts/subscriptions", { url: "https://example.com/hook", events: ["nope"] })).status).toBe(400);
    expect((await admin("POST", "/alerts/subscriptions", { url: "https://example.com/hook", events: [] })).status).toBe(400);
    const ok = await admin("POST", "/alerts/subscriptions", { url: "https://example.com/hook", events: ["budget.threshold"], workspace_id: null });
    expect(ok.status).toBe(201);
    const patched = await admin("PATCH", `/alerts/subscriptions/${ok.body.subscription.id}`, { enabled: false });
    expect(patched.body.subscription.enabled).toBe(false);
    expect((await admin("DELETE", `/alerts/subscriptions/${ok.body.subscription.id}`)).status).toBe(200);
    expect((await admin("GET", `/alerts/subscriptions/${ok.body.subscription.id}/deliveries`)).status).toBe(404);
  });
});
