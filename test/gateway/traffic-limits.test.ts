// Rate and concurrency limits at the HTTP edge, on SQLite and PostgreSQL: the tier's defaults and a
// key's own values, the 429 (status, type, code, Retry-After, X-Request-ID, the gateway's wording) on
// OpenAI and Anthropic routes, the x-ratelimit-* / anthropic-ratelimit-* headers (buffered and on a
// stream's head, absent without a limit, never the upstream's), nothing charged for a refusal,
// GET /v1/me, and the official SDKs' built-in retry honouring Retry-After.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { anthropicMessage, anthropicStream, chatCompletion, chatStream, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

// The standard tier: 3 requests per minute per key by default, 5 requests in flight per account.
const TIER_LIMITS = `standard:
    models: [gpt-mock, claude-mock]
    limits: { key: { requests_per_minute: 3 }, account: { concurrent_requests: 5 } }`;

for (const kind of DATABASE_KINDS) {
  describe(`traffic limits at the HTTP edge on ${kind}`, () => {
    let mock: MockUpstream;
    let gateway: TestGateway;
    const gates: Array<() => void> = [];

    beforeAll(async () => {
      mock = await startMockUpstream();
      mock.handler = async (req, res) => {
        // The upstream's own rate-limit headers describe its key: they must never reach the client.
        const upstreamHeaders = { "x-ratelimit-remaining-requests": "4999", "anthropic-ratelimit-requests-remaining": "4999" };
        if (req.body?.slow) await new Promise<void>((resolve) => gates.push(resolve));
        if (req.url.startsWith("/v1/messages")) {
          if (req.body?.stream) return anthropicStream(res, ["hi"]);
          return json(res, 200, anthropicMessage("hi"), upstreamHeaders);
        }
        if (req.body?.stream) return chatStream(req, res, ["hi"]);
        return json(res, 200, chatCompletion("hi"), upstreamHeaders);
      };
      gateway = await startGateway(mockConfig({ openaiUrl: mock.url }).replace("standard: { models: [gpt-mock, claude-mock] }", TIER_LIMITS), { kind });
    });
    afterAll(async () => {
      while (gates.length > 0) gates.shift()!();
      await gateway.close();
      await mock.close();
    });

    const post = (raw: string, path: string, body: object) =>
      fetch(`${gateway.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const chatBody = { model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], max_tokens: 50 };
    const messagesBody = { model: "claude-mock", messages: [{ role: "user" as const, content: "Hi" }], max_tokens: 50 };

    it("the tier's rpm: headers count down per admitted request, then 429 key_rpm_exceeded with nothing charged", async () => {
      const { account, raw } = await gateway.createAccount({ balance: "10" });
      const store = gateway.app.ctx.store;
      const remaining: string[] = [];
      for (let i = 0; i < 3; i++) {
        const response = await post(raw, "/v1/chat/completions", chatBody);
        expect(response.status).toBe(200);
        await response.json();
        expect(response.headers.get("x-ratelimit-limit-requests")).toBe("3");
        expect(response.headers.get("x-ratelimit-reset-requests")).toMatch(/^(\d+ms|\d+(\.\d+)?s|1m0s)$/);
        // No token limit applies: no token headers.
        expect(response.headers.get("x-ratelimit-limit-tokens")).toBeNull();
        remaining.push(response.headers.get("x-ratelimit-remaining-requests")!);
      }
      expect(remaining).toEqual(["2", "1", "0"]);
      const before = await store.accounts.get(account.id);
      const ledgerBefore = await store.db.selectFrom("ledger").select("id").where("account_id", "=", account.id).execute();

      const refused = await post(raw, "/v1/chat/completions", chatBody);
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // The refusing limit's figures as they stood: none left, reset no later than Retry-After.
      expect(refused.headers.get("x-ratelimit-limit-requests")).toBe("3");
      expect(refused.headers.get("x-ratelimit-remaining-requests")).toBe("0");
      expect(refused.headers.get("x-ratelimit-reset-requests")).toMatch(/^(\d+ms|\d+(\.\d+)?s|1m0s)$/);
      expect(refused.headers.get("anthropic-ratelimit-requests-limit")).toBeNull();
      const requestId = refused.headers.get("x-request-id");
      expect(requestId).toMatch(/^req_/);
      const body = (await refused.json()) as { error: { type: string; code: string; message: string }; request_id: string };
      expect(body.error).toMatchObject({ type: "rate_limit_error", code: "key_rpm_exceeded" });
      expect(body.error.message).toMatch(/gateway's own limit, not the upstream provider's/);
      expect(body.request_id).toBe(requestId);

      const after = await store.accounts.get(account.id);
      expect(after).toMatchObject({ balance: before!.balance, held: 0n, totalSpent: before!.totalSpent });
      expect(await store.db.selectFrom("ledger").select("id").where("account_id", "=", account.id).execute()).toEqual(ledgerBefore);
      expect(await store.db.selectFrom("holds").select("id").where("account_id", "=", account.id).execute()).toEqual([]);
    });

    it("/v1/messages: Anthropic's header names too (RFC 3339 reset), the 429 in Anthropic's shape, never the upstream's headers", async () => {
      const { raw } = await gateway.createAccount({ balance: "10" });
      const response = await post(raw, "/v1/messages", messagesBody);
      expect(response.status).toBe(200);
      await response.json();
      expect(response.headers.get("anthropic-ratelimit-requests-limit")).toBe("3");
      expect(response.headers.get("anthropic-ratelimit-requests-remaining")).toBe("2");
      expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("2");
      const reset = response.headers.get("anthropic-ratelimit-requests-reset")!;
      expect(reset).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      expect(Date.parse(reset) - Date.now()).toBeGreaterThan(0);
      expect(Date.parse(reset) - Date.now()).toBeLessThanOrEqual(61_000);

      // A stream carries the headers on its head.
      const stream = await post(raw, "/v1/messages", { ...messagesBody, stream: true });
      expect(stream.headers.get("content-type")).toMatch(/text\/event-stream/);
      expect(stream.headers.get("anthropic-ratelimit-requests-remaining")).toBe("1");
      await stream.text();
      await (await post(raw, "/v1/messages", messagesBody)).text();

      const refused = await post(raw, "/v1/messages", messagesBody);
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(refused.headers.get("x-request-id")).toMatch(/^req_/);
      expect(refused.headers.get("anthropic-ratelimit-requests-limit")).toBe("3");
      expect(refused.headers.get("anthropic-ratelimit-requests-remaining")).toBe("0");
      expect(refused.headers.get("anthropic-ratelimit-requests-reset")).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      expect(refused.headers.get("x-ratelimit-remaining-requests")).toBe("0");
      expect(await refused.json()).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    });

    it("a key's own limits replace the tier's; a tier without limits sends no rate-limit headers at all", async () => {
      const { key, raw } = await gateway.createAccount({ balance: "10" });
      const store = gateway.app.ctx.store;
      await store.keys.setLimits(key.id, { requests_per_minute: 10, tokens_per_minute: 100_000 });
      gateway.app.ctx.pipeline.authCache.invalidateKey(key.hash);
      const response = await post(raw, "/v1/chat/completions", { ...chatBody, stream: true, stream_options: { include_usage: true } });
      expect(response.headers.get("x-ratelimit-limit-requests")).toBe("10");
      expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("9");
      expect(response.headers.get("x-ratelimit-limit-tokens")).toBe("100000");
      const projected = 100_000 - Number(response.headers.get("x-ratelimit-remaining-tokens"));
      expect(projected).toBeGreaterThanOrEqual(50);
      await response.text();

      // GET /v1/me: the key's own limits, and each applied limit with its window's use.
      const me = (await (await fetch(`${gateway.url}/v1/me`, { headers: { authorization: `Bearer ${raw}` } })).json()) as {
        limits: { key: object; account: object | null; applied: Array<Record<string, unknown>> };
      };
      expect(me.limits.key).toEqual({ requests_per_minute: 10, tokens_per_minute: 100_000 });
      expect(me.limits.account).toBeNull();
      expect(me.limits.applied).toEqual([
        expect.objectContaining({ subject: "key", model: null, requests_per_minute: 10, tokens_per_minute: 100_000, concurrent_requests: null, requests: 1, in_flight: 0 }),
        expect.objectContaining({ subject: "account", model: null, requests_per_minute: null, concurrent_requests: 5, requests: 1, in_flight: 0 }),
      ]);
      expect(me.limits.applied[0]!.resets_at).toEqual(expect.any(String));

      const premium = await gateway.createAccount({ balance: "10", tier: "premium" });
      const free = await post(premium.raw, "/v1/chat/completions", chatBody);
      expect(free.status).toBe(200);
      await free.json();
      for (const name of free.headers.keys()) expect(name).not.toMatch(/ratelimit/);
    });

    it("the openai SDK's retry honours Retry-After: concurrency 1, a slow call in flight, the second succeeds once it ends", { timeout: 20_000 }, async () => {
      const { key, raw } = await gateway.createAccount({ balance: "10" });
      await gateway.app.ctx.store.keys.setLimits(key.id, { concurrent_requests: 1 });
      gateway.app.ctx.pipeline.authCache.invalidateKey(key.hash);
      const slow = post(raw, "/v1/chat/completions", { ...chatBody, slow: true });
      await waitForGate(gates, 1);

      // Without retries: the 429 itself.
      const noRetry = new OpenAI({ apiKey: raw, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
      const error = (await noRetry.chat.completions.create(chatBody as never).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.RateLimitError>;
      expect(error).toBeInstanceOf(OpenAI.RateLimitError);
      expect(error.headers?.get("retry-after")).toBe("1");
      expect((error.error as { code: string }).code).toBe("key_concurrency_exceeded");

      // With retries: the slot frees 300 ms in; the SDK waits the 1 s Retry-After and succeeds.
      const client = new OpenAI({ apiKey: raw, baseURL: `${gateway.url}/v1`, maxRetries: 3 });
      const started = Date.now();
      setTimeout(() => gates.shift()!(), 300);
      const answer = await client.chat.completions.create(chatBody as never);
      expect(answer.choices[0]!.message.content).toBe("hi");
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect((await slow).status).toBe(200);
    });

    it("the @anthropic-ai/sdk retry honours Retry-After the same way", { timeout: 20_000 }, async () => {
      const { key, raw } = await gateway.createAccount({ balance: "10" });
      await gateway.app.ctx.store.keys.setLimits(key.id, { concurrent_requests: 1 });
      gateway.app.ctx.pipeline.authCache.invalidateKey(key.hash);
      const slow = post(raw, "/v1/messages", { ...messagesBody, slow: true });
      await waitForGate(gates, 1);

      const noRetry = new Anthropic({ apiKey: raw, baseURL: gateway.url, maxRetries: 0 });
      const error = (await noRetry.messages.create(messagesBody).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.RateLimitError>;
      expect(error).toBeInstanceOf(Anthropic.RateLimitError);
      expect(error.headers?.get("retry-after")).toBe("1");

      const client = new Anthropic({ apiKey: raw, baseURL: gateway.url, maxRetries: 3 });
      const started = Date.now();
      setTimeout(() => gates.shift()!(), 300);
      const answer = await client.messages.create(messagesBody);
      expect(answer.content[0]).toMatchObject({ type: "text", text: "hi" });
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect((await slow).status).toBe(200);
    });
  });
}

async function waitForGate(gates: unknown[], count: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (gates.length < count) {
    if (Date.now() > deadline) throw new Error("the slow request never reached the mock");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
