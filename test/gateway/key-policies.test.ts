// Key policies through the gateway (ADR 0017): allowed models (route refusal and both /v1/models
// shapes), expiry on a clock the test controls, allowed client networks (direct, through a trusted
// proxy, and a spoofed X-Forwarded-For from an untrusted peer), and the periodic budget's 402.
// Loopback gives the test several peer addresses: the client binds 127.0.0.x as its local address.
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

const CHAT = (model: string) => ({ model, messages: [{ role: "user", content: "Hi" }], max_tokens: 100 });

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: { error?: { type: string; code?: string; message: string }; request_id?: string; data?: Array<{ id: string }>; [k: string]: unknown };
}

/** One HTTP request from the local address `from` (127.0.0.x), so the gateway sees that peer. */
function call(gateway: TestGateway, method: string, path: string, headers: Record<string, string>, body?: object, from = "127.0.0.1"): Promise<Answer> {
  const url = new URL(path, gateway.url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        localAddress: from,
        headers: { ...headers, ...(payload && { "content-type": "application/json" }) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Answer["body"] }));
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

function expectRefusal(answer: Answer, status: number, type: string, code: string): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.body.error?.type).toBe(type);
  expect(answer.body.error?.code).toBe(code);
  expect(answer.headers["x-request-id"]).toMatch(/^req_/);
  expect(answer.body.request_id).toBe(answer.headers["x-request-id"]);
}

describe.each(DATABASE_KINDS)("key policies through the gateway on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  const clock = { ms: Date.parse("2026-03-08T23:00:00Z") };

  beforeAll(async () => {
    mock = await startMockUpstream();
    // 127.0.0.2 is the trusted proxy; every other loopback peer speaks for itself only.
    const group = `
  - id: team-gpt
    kind: chat
    context_window: 128000
    pricing: { input_per_mtok: "1.00", output_per_mtok: "2.00" }
    deployments:
      - { name: only, provider: mockai, upstream_model: upstream-gpt }
`;
    const config = mockConfig({ openaiUrl: mock.url, extra: group }).replace("server:\n", 'server:\n  trusted_proxies: ["127.0.0.2"]\n');
    gateway = await startGateway(config, { kind, now: () => clock.ms });
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });
  beforeEach(() => {
    clock.ms = Date.parse("2026-03-08T23:00:00Z");
    mock.requests.length = 0;
    mock.handler = (_req, res) => json(res, 200, chatCompletion("ok", { usage: { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 2000 } }));
  });

  const store = () => gateway.app.ctx.store;
  const auth = (raw: string) => ({ authorization: `Bearer ${raw}` });
  const balanceOf = async (accountId: string) => (await store().accounts.get(accountId))!.balance;

  it("allowed models: another model of the tier is 403 model_not_allowed_for_key, nothing charged, nothing forwarded", async () => {
    const { raw, key, account } = await gateway.createAccount({ balance: "1.00" });
    await store().keys.setPolicy(key.id, { allowedModels: ["gpt-mock"] });
    const before = await balanceOf(account.id);
    const refused = await call(gateway, "POST", "/v1/chat/completions", auth(raw), CHAT("claude-mock"));
    expectRefusal(refused, 403, "forbidden", "model_not_allowed_for_key");
    expect(refused.body.error?.message).toContain("key's policy");
    const anthropic = await call(gateway, "POST", "/v1/messages", { "x-api-key": raw, "anthropic-version": "2023-06-01" }, CHAT("claude-mock"));
    expect(anthropic.status).toBe(403);
    expect(anthropic.body).toMatchObject({ type: "error", error: { type: "forbidden", message: expect.stringContaining("key's policy") } });
    expect(mock.requests).toHaveLength(0);
    expect(await balanceOf(account.id)).toBe(before);
    expect(await store().db.selectFrom("holds").select("id").where("account_id", "=", account.id).execute()).toEqual([]);

    expect((await call(gateway, "POST", "/v1/chat/completions", auth(raw), CHAT("gpt-mock"))).status).toBe(200);
  });

  it("allowed models: /v1/models lists only them, in the OpenAI and the Anthropic shape", async () => {
    const { raw, key } = await gateway.createAccount();
    const unrestricted = await call(gateway, "GET", "/v1/models", auth(raw));
    expect(unrestricted.body.data!.map((m) => m.id).sort()).toEqual(["claude-mock", "gpt-mock"]);
    await store().keys.setPolicy(key.id, { allowedModels: ["claude-mock"] });
    gateway.app.ctx.pipeline.authCache.invalidateKey(key.hash);
    const openai = await call(gateway, "GET", "/v1/models", auth(raw));
    expect(openai.body).toMatchObject({ object: "list", data: [{ id: "claude-mock", object: "model" }] });
    expect(openai.body.data).toHaveLength(1);
    const anthropic = await call(gateway, "GET", "/v1/models", { "x-api-key": raw, "anthropic-version": "2023-06-01" });
    expect(anthropic.body).toMatchObject({ data: [{ type: "model", id: "claude-mock" }], has_more: false, first_id: "claude-mock", last_id: "claude-mock" });
    expect((await call(gateway, "GET", "/v1/models/gpt-mock", auth(raw))).status).toBe(404);
    expect((await call(gateway, "GET", "/v1/models/claude-mock", auth(raw))).status).toBe(200);
  });

  it("allowed models: a routing group counts as its own id, not as the models its deployments serve", async () => {
    const { raw, key } = await gateway.createAccount({ tier: "premium" });
    await store().keys.setPolicy(key.id, { allowedModels: ["team-gpt"] });
    const served = await call(gateway, "POST", "/v1/chat/completions", auth(raw), CHAT("team-gpt"));
    expect(served.status, JSON.stringify(served.body)).toBe(200);
    expect(served.headers["x-gateway-deployment"]).toBe("only");
    expectRefusal(await call(gateway, "POST", "/v1/chat/completions", auth(raw), CHAT("gpt-mock")), 403, "forbidden", "model_not_allowed_for_key");
    expect((await call(gateway, "GET", "/v1/models", auth(raw))).body.data!.map((m) => m.id)).toEqual(["team-gpt"]);
  });

  it("expiry: served before, 401 key_expired after (also from the auth cache), the stored status unchanged", async () => {
    const { raw, key } = await gateway.createAccount();
    await store().keys.setPolicy(key.id, { expiresAt: clock.ms + 60_000 });
    gateway.app.ctx.pipeline.authCache.invalidateKey(key.hash);
    expect((await call(gateway, "POST", "/v1/chat/completions", auth(raw), CHAT("gpt-mock"))).status).toBe(200);
    // The key is now cached; its expiry is judged per request, not when it was cached.
    clock.ms += 59_999;
    expect((await call(gateway, "GET", "/v1/me", auth(raw))).status).toBe(200);
    clock.ms += 1;
    const expired = await call(gateway, "POST", "/v1/chat/completions", auth(raw), CHAT("gpt-mock"));
    expectRefusal(expired, 401, "auth_error", "key_expired");
    expect(expired.body.error?.message).toContain("expired");
    expectRefusal(await call(gateway, "GET", "/v1/models", auth(raw)), 401, "auth_error", "key_expired");
    expect((await store().keys.get(key.id))!.status).toBe("enabled");
    expect(mock.requests).toHaveLength(1);
  });

  it("networks: a direct peer inside the list is served, outside it is 403 key_network_not_allowed", async () => {
    const { raw, key } = await gateway.createAccount();
    await store().keys.setPolicy(key.id, { allowedNetworks: ["127.0.0.1/32", "10.0.0.0/8"] });
    expect((await call(gateway, "POST", "/v1/chat/completions", auth(raw), CHAT("gpt-mock"), "127.0.0.1")).status).toBe(200);
    const outside = await call(gateway, "POST", "/v1/chat/completions", auth(raw), CHAT("gpt-mock"), "127.0.0.3");
    expectRefusal(outside, 403, "forbidden", "key_network_not_allowed");
    expect(outside.body.error?.message).toContain("127.0.0.3");
    expect(mock.requests).toHaveLength(1);
  });

  it("networks: through the trusted proxy the X-Forwarded-For client decides; a spoofed header from an untrusted peer is ignored", async () => {
    const { raw, key } = await gateway.createAccount();
    await store().keys.setPolicy(key.id, { allowedNetworks: ["10.1.0.0/16", "127.0.0.1"] });
    const via = (xff: string, from: string) => call(gateway, "GET", "/v1/models", { ...auth(raw), "x-forwarded-for": xff }, undefined, from);
    // The trusted proxy (127.0.0.2, itself outside the list) speaks for a client inside it, or outside it.
    expect((await via("10.1.2.3", "127.0.0.2")).status).toBe(200);
    expectRefusal(await via("192.0.2.7", "127.0.0.2"), 403, "forbidden", "key_network_not_allowed");
    // An untrusted peer claiming an allowed client is judged by its own address...
    expectRefusal(await via("10.1.2.3", "127.0.0.3"), 403, "forbidden", "key_network_not_allowed");
    // ...and one inside the list is not refused for a forwarded address it made up.
    expect((await via("192.0.2.7", "127.0.0.1")).status).toBe(200);
  });

  it("periodic budget: 402 key_period_budget_exceeded with the reset time, nothing charged, key enabled; served again after the reset", async () => {
    const { raw, key, account } = await gateway.createAccount({ balance: "1.00" });
    // A request projects a few prompt tokens + 100 output (well under 0.001 USD) and is charged 0.003 USD
    // (1000 + 1000 tokens reported): a 0.003 budget admits the first and refuses the second.
    await store().keys.setPolicy(key.id, { period: "day", periodBudget: 3_000_000n });
    expect((await call(gateway, "POST", "/v1/chat/completions", auth(raw), CHAT("gpt-mock"))).status).toBe(200);
    const before = await balanceOf(account.id);
    const refused = await call(gateway, "POST", "/v1/chat/completions", auth(raw), CHAT("gpt-mock"));
    expectRefusal(refused, 402, "key_budget_exceeded", "key_period_budget_exceeded");
    expect(refused.body.error?.message).toContain("2026-03-09T00:00:00.000Z");
    expect(await balanceOf(account.id)).toBe(before);
    expect((await store().keys.get(key.id))!.status).toBe("enabled");
    const me = await call(gateway, "GET", "/v1/me", auth(raw));
    expect(me.body.key).toMatchObject({
      status: "enabled",
      policy: { periodic_budget: { period: "day", budget_usd: "0.003", spent_usd: "0.003", tokens_used: 2000, resets_at: "2026-03-09T00:00:00.000Z" } },
    });
    clock.ms = Date.parse("2026-03-09T00:00:00Z");
    expect((await call(gateway, "POST", "/v1/chat/completions", auth(raw), CHAT("gpt-mock"))).status).toBe(200);
  });
});
