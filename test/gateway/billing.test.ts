// Billing through the gateway: each 402, the 502 ledger_write_failed contract with nothing changed,
// key exhaustion and recovery, /v1/me and /v1/usage, and the cost header.
import OpenAI from "openai";
import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";

// gpt-mock: $1/M input, $2/M output; default output projection 1000 tokens.
const BODY = { model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], max_tokens: 100 };

describe("billing through the gateway", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }));
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });
  beforeEach(() => {
    mock.requests.length = 0;
    mock.handler = (_req, res) => json(res, 200, chatCompletion("ok", { usage: { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 2000 } }));
  });

  async function post(raw: string, body: object = BODY) {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as { error?: { type: string; message: string }; request_id?: string } };
  }
  function expect402(result: Awaited<ReturnType<typeof post>>, type: string) {
    expect(result.status).toBe(402);
    expect(result.body.error!.type).toBe(type);
    expect(result.headers.get("x-request-id")).toBe(result.body.request_id);
  }

  /** The parts of GET /v1/usage these tests read. */
  interface UsageReport {
    totals: { requests: number };
    by_model: unknown[];
    by_day: unknown[];
  }

  it("charges exactly, with the cost in a header, and shows it in /v1/me and /v1/usage", async () => {
    const { raw, account } = await gateway.createAccount({ balance: "1.00" });
    const ok = await post(raw);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-gateway-cost-usd")).toBe("0.003");
    const me = await (await fetch(`${gateway.url}/v1/me`, { headers: { authorization: `Bearer ${raw}` } })).json();
    expect(me).toMatchObject({ id: account.id, status: "active", tier: "standard", balance_usd: "0.997", held_usd: "0.00", total_spent_usd: "0.003" });
    const usage = (await (await fetch(`${gateway.url}/v1/usage`, { headers: { authorization: `Bearer ${raw}` } })).json()) as UsageReport;
    expect(usage.totals).toMatchObject({ requests: 1, input_tokens: 1000, output_tokens: 1000, cost_usd: "0.003" });
    expect(usage.by_model).toEqual([expect.objectContaining({ model: "gpt-mock", requests: 1 })]);
    expect(usage.by_day).toHaveLength(1);
    const future = (await (await fetch(`${gateway.url}/v1/usage?start=2099-01-01&end=2099-02-01`, { headers: { authorization: `Bearer ${raw}` } })).json()) as UsageReport;
    expect(future.totals.requests).toBe(0);
    const bad = await fetch(`${gateway.url}/v1/usage?start=yesterday`, { headers: { authorization: `Bearer ${raw}` } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe("start");
  });

  it("402 quota_exceeded when the balance does not cover the projected cost, before going upstream", async () => {
    const { raw } = await gateway.createAccount({ balance: "0.0001" });
    expect402(await post(raw), "quota_exceeded");
    expect(mock.requests).toHaveLength(0);
  });

  it("402 quota_exceeded when the monthly budget is used up", async () => {
    const { raw } = await gateway.createAccount({ balance: "10", monthlyBudget: "0.003" });
    expect((await post(raw)).status).toBe(200);
    expect402(await post(raw), "quota_exceeded");
    const tokens = await gateway.createAccount({ balance: "10", monthlyTokenBudget: 2050 });
    expect((await post(tokens.raw)).status).toBe(200);
    expect402(await post(tokens.raw), "quota_exceeded");
  });

  it("402 key_budget_exceeded and key_token_cap_exceeded; exhaustion and recovery by raising the cap", async () => {
    const capped = await gateway.createAccount({ balance: "10", budgetCap: "0.003" });
    expect((await post(capped.raw)).status).toBe(200);
    expect402(await post(capped.raw), "key_budget_exceeded");
    const tokenCapped = await gateway.createAccount({ balance: "10", tokenCap: 2000 });
    expect((await post(tokenCapped.raw)).status).toBe(200);
    const key = await gateway.app.ctx.store.keys.get(tokenCapped.key.id);
    expect(key!.status).toBe("exhausted");
    gateway.app.ctx.pipeline.authCache.invalidateKey(key!.hash);
    expect402(await post(tokenCapped.raw), "key_token_cap_exceeded");
    await gateway.app.ctx.billing.setKeyCaps(key!.id, { tokenCap: 100_000 }, null);
    gateway.app.ctx.pipeline.authCache.invalidateKey(key!.hash);
    expect((await gateway.app.ctx.store.keys.get(key!.id))!.status).toBe("enabled");
    expect((await post(tokenCapped.raw)).status).toBe(200);
  });

  it("502 ledger_write_failed when settlement fails midway, with no partial change and no content", async () => {
    const { raw, account, key } = await gateway.createAccount({ balance: "1.00" });
    expect((await post(raw)).status).toBe(200);
    const before = {
      account: await gateway.app.ctx.store.accounts.get(account.id),
      key: await gateway.app.ctx.store.keys.get(key.id),
      ledger: await gateway.app.ctx.store.ledger.count(account.id),
    };
    const db = gateway.app.ctx.store.db;
    // Fails the last write of the settlement transaction, after the account and key were updated.
    await sql`create trigger fail_ledger before insert on ledger begin select raise(abort, 'injected failure'); end`.execute(db);
    try {
      mock.handler = (_req, res) => json(res, 200, chatCompletion("PAID-CONTENT"));
      const failed = await post(raw);
      expect(failed.status).toBe(502);
      expect(failed.body.error!.type).toBe("ledger_write_failed");
      expect(JSON.stringify(failed.body)).not.toContain("PAID-CONTENT");
    } finally {
      await sql`drop trigger fail_ledger`.execute(db);
    }
    const after = {
      account: await gateway.app.ctx.store.accounts.get(account.id),
      key: await gateway.app.ctx.store.keys.get(key.id),
      ledger: await gateway.app.ctx.store.ledger.count(account.id),
    };
    expect(after.account!.balance).toBe(before.account!.balance);
    expect(after.account!.totalSpent).toBe(before.account!.totalSpent);
    expect(after.key!.spent).toBe(before.key!.spent);
    expect(after.key!.tokensUsed).toBe(before.key!.tokensUsed);
    expect(after.ledger).toBe(before.ledger);
  });

  it("the SDK sees the 402 types as errors with the request id", async () => {
    const { raw } = await gateway.createAccount({ balance: "0" });
    const client = new OpenAI({ apiKey: raw, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const error = (await client.chat.completions.create(BODY as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(402);
    expect((error.error as { type: string }).type).toBe("quota_exceeded");
  });
});
