// Key policies through the dashboard API (ADR 0017): set at creation and by PATCH, validated against
// the catalogue, the account's tier and their bounds (a bad field changes nothing), shown with the
// periodic budget's use and reset, and an expired key listed as `expired` with its stored status kept.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { expectError, signedInAccount, type DashboardClient } from "./support.js";

describe.each(DATABASE_KINDS)("dashboard key policies on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let client: DashboardClient;
  const clock = { ms: Date.parse("2026-03-11T10:00:00Z") };

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("hi", { usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 } }));
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }), { kind, now: () => clock.ms });
    ({ client } = await signedInAccount(gateway));
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });
  beforeEach(() => {
    clock.ms = Date.parse("2026-03-11T10:00:00Z");
  });

  const chat = (raw: string, model = "gpt-mock") =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 10 }),
    });

  it("creates a key with every policy field and shows it, the periodic budget with its use and reset", async () => {
    const created = await client.post("/keys", {
      name: "ci",
      allowed_models: ["gpt-mock", "gpt-mock"],
      allowed_networks: ["10.0.0.0/8", " 127.0.0.1 "],
      allowed_mcp: ["files", "tickets__create", "files"],
      expires_at: "2026-04-01T00:00:00Z",
      period: "week",
      period_budget_usd: "5.00",
      period_token_cap: 100000,
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.key).toMatchObject({
      status: "enabled",
      effective_status: "enabled",
      policy: {
        allowed_models: ["gpt-mock"],
        allowed_networks: ["10.0.0.0/8", "127.0.0.1/32"],
        allowed_mcp: ["files", "tickets__create"],
        expires_at: "2026-04-01T00:00:00.000Z",
        expired: false,
        periodic_budget: {
          period: "week",
          budget_usd: "5.00",
          token_cap: 100000,
          spent_usd: "0.00",
          tokens_used: 0,
          period_start: "2026-03-09T00:00:00.000Z",
          resets_at: "2026-03-16T00:00:00.000Z",
        },
      },
    });
    expect((await chat(created.body.raw_key)).status).toBe(200);
    const read = await client.get(`/keys/${created.body.key.id}`);
    expect(read.body.key.policy.periodic_budget).toMatchObject({ spent_usd: "0.00003", tokens_used: 20 });
  });

  it("refuses invalid policies with invalid_request naming the field, and creates nothing", async () => {
    const before = (await client.get("/keys")).body.data.length;
    const cases: Array<[object, string]> = [
      [{ allowed_models: ["no-such-model"] }, "allowed_models"],
      [{ allowed_models: ["premium-mock"] }, "allowed_models"], // not in the standard tier
      [{ allowed_models: [] }, "allowed_models"],
      [{ allowed_models: Array.from({ length: 101 }, (_, i) => `m${i}`) }, "allowed_models"],
      [{ allowed_networks: ["10.0.0.0/33"] }, "allowed_networks"],
      [{ allowed_networks: ["example.com"] }, "allowed_networks"],
      [{ allowed_mcp: ["Files"] }, "allowed_mcp"],
      [{ allowed_mcp: [] }, "allowed_mcp"],
      [{ expires_at: "tomorrow" }, "expires_at"],
      [{ period: "fortnight", period_budget_usd: "1" }, "period"],
      [{ period: "day" }, "period"],
      [{ period_budget_usd: "1" }, "period"],
      [{ period: "day", period_budget_usd: "-1" }, "period_budget_usd"],
      [{ period: "day", period_token_cap: -5 }, "period_token_cap"],
    ];
    for (const [body, param] of cases) {
      const refused = await client.post("/keys", { name: "bad", ...body });
      expectError(refused, 400, "invalid_request");
      expect(refused.body.error.param, JSON.stringify(body)).toBe(param);
    }
    expect((await client.get("/keys")).body.data.length).toBe(before);
  });

  it("PATCH sets, changes and removes policies, takes effect on the gateway at once, and a bad field changes nothing", async () => {
    const created = await client.post("/keys", { name: "p" });
    const { id } = created.body.key;
    const raw = created.body.raw_key as string;
    expect((await chat(raw, "claude-mock")).status).toBe(200);

    const patched = await client.patch(`/keys/${id}`, { allowed_models: ["gpt-mock"], period: "day", period_token_cap: 1000 });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.key.policy).toMatchObject({ allowed_models: ["gpt-mock"], periodic_budget: { period: "day", token_cap: 1000, budget_usd: null } });
    const refused = await chat(raw, "claude-mock");
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("model_not_allowed_for_key");

    expectError(await client.patch(`/keys/${id}`, { allowed_models: ["gpt-mock"], allowed_networks: ["300.1.1.1"] }), 400, "invalid_request");
    expectError(await client.patch(`/keys/${id}`, { period_token_cap: null }), 400, "invalid_request"); // a period without its budget
    expect((await client.get(`/keys/${id}`)).body.key.policy).toMatchObject({ allowed_networks: null, periodic_budget: { token_cap: 1000 } });

    const cleared = await client.patch(`/keys/${id}`, { allowed_models: null, period: null, period_token_cap: null });
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body.key.policy).toMatchObject({ allowed_models: null, periodic_budget: null });
    expect((await chat(raw, "claude-mock")).status).toBe(200);
  });

  it("an expired key is listed as expired, keeps its stored status, and is refused", async () => {
    const created = await client.post("/keys", { name: "temp", expires_at: new Date(clock.ms + 1000).toISOString() });
    const { id } = created.body.key;
    expect((await chat(created.body.raw_key)).status).toBe(200);
    clock.ms += 1000;
    const listed = (await client.get("/keys")).body.data.find((k: { id: string }) => k.id === id);
    expect(listed).toMatchObject({ status: "enabled", effective_status: "expired", policy: { expired: true } });
    const refused = await chat(created.body.raw_key);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("key_expired");
    // Lifting the expiry serves it again.
    expect((await client.patch(`/keys/${id}`, { expires_at: null })).body.key.effective_status).toBe("enabled");
    expect((await chat(created.body.raw_key)).status).toBe(200);
  });
});
