// Three alert events end to end through real requests (issue 45, item 2; ADR 0040): a shared provider
// key the upstream refuses with 401 is disabled (provider_key.disabled), a key answering 500 opens its
// breaker (upstream.breaker_open), and a gateway key's USD cap is used up (key.exhausted). Each has its
// own subscription; the receiver gets exactly one signed delivery of each, and no upstream key, gateway
// key or webhook secret appears in any payload. An operator's disable names the provider too.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_SCOPES } from "../../src/admin/scopes.js";
import { keyFingerprint } from "../../src/upstreams/upstream-health.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, sleep, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { alertsConfig, signatureValid, startReceiver, waitFor, type Receiver } from "./support.js";

// Canary upstream keys: none may reach a webhook payload.
const REFUSED = "sk-canary-refused-key-0001";
const FAILING = "sk-canary-failing-key-0002";
const GOOD = "sk-canary-good-key-0003";
const EXTRA = `
catalog: { source: database }
upstream_health:
  window_ms: 60000
  min_requests: 4
  failure_threshold: 0.5
  open_ms: 60000
  half_open_trials: 1
`;
// 1000 + 1000 tokens at USD 1 and 2 per Mtok: USD 0.003 a request.
const USAGE = { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 2000 };

type Event = "provider_key.disabled" | "upstream.breaker_open" | "key.exhausted";

describe.each(DATABASE_KINDS)("alert events from real requests on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let receiver: Receiver;
  let token: string;
  const subscriptions = new Map<Event, { id: string; secret: string }>();
  const rawGatewayKeys: string[] = [];

  async function admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const response = await fetch(`${gateway.url}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }

  const chat = (raw: string) =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mock", max_tokens: 1000, messages: [{ role: "user", content: "hi" }] }),
    });
  const receivedOf = (event: Event) => receiver.received.filter((r) => r.headers["x-gateway-event"] === event);
  const deliveriesOf = async (event: Event) => (await admin("GET", `/alerts/subscriptions/${subscriptions.get(event)!.id}/deliveries`)).body.data as any[];

  /** Exactly one delivery of the event, signed with its subscription's secret; its payload. */
  async function theOneDelivery(event: Event): Promise<any> {
    await waitFor(`the ${event} delivery`, async () => (await deliveriesOf(event)).find((d) => d.status === "delivered"));
    // A duplicate would follow within a few dispatcher polls.
    await sleep(300);
    const got = receivedOf(event);
    expect(got, event).toHaveLength(1);
    const deliveries = await deliveriesOf(event);
    expect(deliveries.map((d) => [d.event_type, d.status, d.attempts])).toEqual([[event, "delivered", 1]]);
    const { secret } = subscriptions.get(event)!;
    expect(signatureValid(secret, got[0]!.headers["x-gateway-signature"] as string, got[0]!.body)).toBe(true);
    const body = JSON.parse(got[0]!.body);
    expect(body).toMatchObject({ id: deliveries[0].event_id, type: event });
    return body.data;
  }

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (req, res) => {
      if (req.key === REFUSED) return json(res, 401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } });
      if (req.key === FAILING) return json(res, 500, { error: { message: "boom" } });
      json(res, 200, chatCompletion("fine", { usage: USAGE }));
    };
    receiver = await startReceiver();
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, openaiKeys: [REFUSED, FAILING, GOOD], extra: EXTRA + alertsConfig() }), { kind });
    token = (await gateway.app.ctx.store.adminTokens.create({ name: "alerts", scopes: ADMIN_SCOPES })).raw;
    for (const event of ["provider_key.disabled", "upstream.breaker_open", "key.exhausted"] as const) {
      const created = await admin("POST", "/alerts/subscriptions", { url: receiver.url, format: "json", events: [event] });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      subscriptions.set(event, { id: created.body.subscription.id, secret: created.body.secret });
    }
    // The watcher looks for enabled subscriptions every 2 s; look now rather than wait.
    await gateway.app.alerting.watcher.refreshActive();
  });
  afterAll(async () => {
    await gateway?.close();
    await receiver?.close();
    await mock?.close();
  });

  it("reports a provider key the upstream refuses, and a key whose breaker opens, once each", async () => {
    const { raw } = await gateway.createAccount({ balance: "10" });
    rawGatewayKeys.push(raw);
    // Rotation fails over past a bad key; one that meets both bad keys in a row may end in 502.
    for (let i = 0; i < 12; i++) expect([200, 502]).toContain((await chat(raw)).status);
    // Once both are out of the rotation, every request succeeds on the good key.
    for (let i = 0; i < 3; i++) expect((await chat(raw)).status).toBe(200);
    expect(mock.requests.filter((r) => r.key === REFUSED)).toHaveLength(1);
    // Four failures opened the failing key's breaker: it is not tried again.
    expect(mock.requests.filter((r) => r.key === FAILING)).toHaveLength(4);

    const disabled = await theOneDelivery("provider_key.disabled");
    const catalog = (await admin("GET", "/catalog")).body.provider_keys as Array<{ id: string; provider: string; last4: string; status: string }>;
    const refused = catalog.find((k) => k.provider === "mockai" && k.last4 === "0001")!;
    expect(refused.status).toBe("disabled");
    expect(disabled).toEqual({ key: refused.id, provider: "mockai", reason: "the upstream answered HTTP 401", actor: expect.any(String) });

    const opened = await theOneDelivery("upstream.breaker_open");
    expect(opened).toEqual({ scope: `key:${keyFingerprint("mockai", FAILING)}`, opened_until: expect.any(String) });
    expect(Date.parse(opened.opened_until)).toBeGreaterThan(Date.now());
  });

  it("reports a gateway key whose USD cap is used up, once", async () => {
    const { account, key, raw } = await gateway.createAccount({ balance: "10", budgetCap: "0.0055" });
    rawGatewayKeys.push(raw);
    // Unclamped, so the second request (projected USD 0.002) is admitted whole and passes the cap (a
    // clamped one would stop just short of it: refused on projection, not exhausted).
    await gateway.app.ctx.store.db.updateTable("keys").set({ clamp_output: 0n }).where("id", "=", key.id).execute();
    // USD 0.003 a request: the second passes the cap, the third is refused.
    const statuses: number[] = [];
    for (let i = 0; i < 4 && !statuses.includes(402); i++) statuses.push((await chat(raw)).status);
    expect(statuses).toEqual([200, 200, 402]);
    const exhausted = await theOneDelivery("key.exhausted");
    expect(exhausted).toEqual({ key_id: key.id, account_id: account.id, workspace_id: null, unit: "USD", limit: "0.0055", used: "0.006" });
  });

  it("reports an operator's disabling of a provider key, naming its provider", async () => {
    const before = receivedOf("provider_key.disabled").length;
    const catalog = (await admin("GET", "/catalog")).body.provider_keys as Array<{ id: string; provider: string; last4: string }>;
    const failing = catalog.find((k) => k.provider === "mockai" && k.last4 === "0002")!;
    expect((await admin("PATCH", `/catalog/provider-keys/${failing.id}`, { status: "disabled" })).status).toBe(200);
    const got = await waitFor("the operator's disable", () => receivedOf("provider_key.disabled").slice(before)[0]);
    expect(signatureValid(subscriptions.get("provider_key.disabled")!.secret, got.headers["x-gateway-signature"] as string, got.body)).toBe(true);
    expect(JSON.parse(got.body).data).toEqual({ key: failing.id, provider: "mockai", reason: "disabled by alerts", actor: "alerts" });
  });

  it("puts no upstream key, gateway key or webhook secret in any payload", () => {
    expect(receiver.received.length).toBeGreaterThanOrEqual(3);
    const everything = receiver.received.map((r) => JSON.stringify(r.headers) + r.body).join("\n");
    for (const secret of [REFUSED, FAILING, GOOD, ...rawGatewayKeys, ...[...subscriptions.values()].map((s) => s.secret)]) {
      expect(everything).not.toContain(secret);
    }
    // Not even a key's tail beyond what the catalog shows.
    expect(everything).not.toContain("canary");
  });
});
