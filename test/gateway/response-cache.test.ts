// The response cache (ADR 0044) end to end: two gateways sharing one database and one Redis (each with
// its own memory and its own Redis connection), on SQLite and PostgreSQL. The second gateway serves the
// first one's answer to the same account and not to another; streams replay as streams; embeddings;
// a hit is charged the hit price with no tokens, and the ledger, /v1/usage, the key's and the
// account's counters agree to the nano after a mix of hits and misses; a key refused by its budget is
// refused for a hit too; an unreachable Redis makes every request a miss that still succeeds.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, chatStream, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { cacheSubject } from "../../src/store/cache-settings-store.js";
import { parseUsd } from "../../src/core/money.js";

function config(upstreamUrl: string, prefix: string, hitPrice: string): string {
  return `
providers:
  mockai:
    type: openai
    base_url: "${upstreamUrl}/v1"
    keys: ["sk-mock-openai-key-0001"]
models:
  - id: gpt-mock
    kind: chat
    provider: mockai
    upstream_model: upstream-gpt
    max_output_tokens: 4096
    default_output_tokens: 100
    pricing: { input_per_mtok: "1.00", output_per_mtok: "2.00" }
  - id: embed-mock
    kind: embedding
    provider: mockai
    upstream_model: upstream-embed
    pricing: { input_per_mtok: "0.13" }
tiers:
  standard: { models: ["*"] }
server:
  default_tier: standard
cache:
  hit_price: "${hitPrice}"
  key_prefix: "${prefix}"
`;
}

interface Answer {
  status: number;
  cache: string | null;
  cost: string | null;
  text: string;
}

async function post(gateway: TestGateway, raw: string, path: string, body: object): Promise<Answer> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, cache: response.headers.get("x-gateway-cache"), cost: response.headers.get("x-gateway-cost-usd"), text: await response.text() };
}

const question = (text: string) => ({ model: "gpt-mock", messages: [{ role: "user", content: text }], max_tokens: 50, temperature: 0.7 });
/** 10 input tokens at $1/Mtok and 5 output tokens at $2/Mtok. */
const MISS_COST = 10n * 1000n + 5n * 2000n;

for (const kind of DATABASE_KINDS) {
  describe(`the response cache across two gateways through Redis (${kind})`, () => {
    let mock: MockUpstream;
    let database: TestDatabase;
    let first: TestGateway;
    let second: TestGateway;
    const prefix = `test:${randomUUID()}:`;

    beforeAll(async () => {
      mock = await startMockUpstream();
      mock.handler = async (req, res) => {
        if (req.url.endsWith("/embeddings"))
          return json(res, 200, {
            object: "list",
            data: [{ object: "embedding", index: 0, embedding: [0.25, -0.5] }],
            model: "upstream-embed",
            usage: { prompt_tokens: 7, total_tokens: 7 },
          });
        if (req.body?.stream) return chatStream(req, res, ["Hello", " there"], { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
        return json(res, 200, chatCompletion("Hello there", { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
      };
      database = await createTestDatabase(kind);
      const env = { REDIS_URL: "redis://127.0.0.1:6379" };
      first = await startGateway(config(mock.url, prefix, "0.1"), { database, env });
      second = await startGateway(config(mock.url, prefix, "0.1"), { database, env });
    });

    afterAll(async () => {
      await first?.close();
      await second?.close();
      await database?.drop();
      await mock?.close();
    });

    async function cachedAccount(balance = "10") {
      const created = await first.createAccount({ balance });
      await first.app.ctx.store.cacheSettings.write(cacheSubject("key", created.key.id), { ttlSeconds: 600, scope: "account", updatedAt: Date.now() });
      return created;
    }

    it("the second gateway serves the same account's answer at the hit price; another account misses", async () => {
      const alice = await cachedAccount();
      const bob = await cachedAccount();
      const body = question(`scoped ${randomUUID()}`);
      const miss = await post(first, alice.raw, "/v1/chat/completions", body);
      expect(miss).toMatchObject({ status: 200, cache: "miss", cost: "0.00002" });
      const calls = mock.requests.length;
      // Stored after the answer: give the background write a moment.
      await new Promise((r) => setTimeout(r, 100));
      const hit = await post(second, alice.raw, "/v1/chat/completions", { ...body, user: "not part of the key", stream: false });
      expect(hit).toMatchObject({ status: 200, cache: "hit", cost: "0.000002" });
      expect(mock.requests.length).toBe(calls);
      const missJson = JSON.parse(miss.text) as { choices: unknown; usage: { cost: string } };
      const hitJson = JSON.parse(hit.text) as { choices: unknown; usage: { cost: string } };
      expect(hitJson.choices).toEqual(missJson.choices);
      expect(hitJson.usage.cost).toBe("0.000002");
      const other = await post(second, bob.raw, "/v1/chat/completions", body);
      expect(other).toMatchObject({ status: 200, cache: "miss" });
      expect(mock.requests.length).toBe(calls + 1);
      // A key without a setting does not use the cache at all.
      const plain = await first.createAccount();
      expect((await post(first, plain.raw, "/v1/chat/completions", body)).cache).toBeNull();
    });

    it("a stream is replayed as a stream with the same events", async () => {
      const alice = await cachedAccount();
      const body = { ...question(`streamed ${randomUUID()}`), stream: true, stream_options: { include_usage: true } };
      const miss = await post(first, alice.raw, "/v1/chat/completions", body);
      expect(miss).toMatchObject({ status: 200, cache: "miss" });
      await new Promise((r) => setTimeout(r, 100));
      const calls = mock.requests.length;
      const hit = await post(second, alice.raw, "/v1/chat/completions", body);
      expect(hit).toMatchObject({ status: 200, cache: "hit" });
      expect(mock.requests.length).toBe(calls);
      const events = (text: string) => text.split("\n\n").filter(Boolean);
      expect(events(hit.text)).toHaveLength(events(miss.text).length);
      expect(hit.text.replace(/"cost":"[0-9.]+"/, "COST")).toBe(miss.text.replace(/"cost":"[0-9.]+"/, "COST"));
      expect(hit.text).toContain('"cost":"0.000002"');
      expect(hit.text.trim().endsWith("data: [DONE]")).toBe(true);
      // A buffered request is not served from a stream's entry (the stored form is per delivery).
      expect((await post(second, alice.raw, "/v1/chat/completions", { ...body, stream: false, stream_options: undefined })).cache).toBe("miss");
    });

    it("embeddings hit on the other gateway, with the cost in usage", async () => {
      const alice = await cachedAccount();
      const body = { model: "embed-mock", input: `embed ${randomUUID()}` };
      const miss = await post(first, alice.raw, "/v1/embeddings", body);
      expect(miss).toMatchObject({ status: 200, cache: "miss" });
      await new Promise((r) => setTimeout(r, 100));
      const hit = await post(second, alice.raw, "/v1/embeddings", body);
      expect(hit).toMatchObject({ status: 200, cache: "hit" });
      const hitJson = JSON.parse(hit.text) as { data: unknown; usage: { prompt_tokens: number; cost: string } };
      expect(hitJson.data).toEqual((JSON.parse(miss.text) as { data: unknown }).data);
      // 7 tokens at $0.13/Mtok = 910 nano; a tenth of it is 91 nano.
      expect(hitJson.usage.cost).toBe("0.000000091");
    });

    it("the ledger, /v1/usage, the key and the account agree to the nano after hits and misses", async () => {
      const alice = await cachedAccount();
      const bodies = [question(`mix a ${randomUUID()}`), question(`mix b ${randomUUID()}`)];
      const served: Answer[] = [];
      for (const [i, body] of [bodies[0], bodies[0], bodies[1], bodies[0], bodies[1]].entries()) {
        served.push(await post(i % 2 === 0 ? first : second, alice.raw, "/v1/chat/completions", body!));
        await new Promise((r) => setTimeout(r, 60));
      }
      expect(served.map((a) => a.cache)).toEqual(["miss", "hit", "miss", "hit", "hit"]);
      const charged = served.reduce((sum, a) => sum + parseUsd(a.cost!)!, 0n);
      expect(charged).toBe(2n * MISS_COST + 3n * (MISS_COST / 10n));
      const rows = await first.app.ctx.store.db.selectFrom("ledger").selectAll().where("account_id", "=", alice.account.id).where("kind", "=", "usage").execute();
      expect(rows).toHaveLength(5);
      const hits = rows.filter((r) => r.provider === "(cache)");
      expect(hits).toHaveLength(3);
      expect(hits.every((r) => Number(r.input_tokens) === 0 && Number(r.output_tokens) === 0 && BigInt(r.cost_nano) === MISS_COST / 10n)).toBe(true);
      expect(rows.reduce((sum, r) => sum + BigInt(r.cost_nano), 0n)).toBe(charged);
      const account = await first.app.ctx.store.accounts.get(alice.account.id);
      expect(account!.totalSpent).toBe(charged);
      expect(account!.balance).toBe(parseUsd("10")! - charged);
      const key = await first.app.ctx.store.keys.get(alice.key.id);
      expect(key!.spent).toBe(charged);
      // Tokens once: the two misses' tokens, none for the hits.
      expect(key!.tokensUsed).toBe(2 * 15);
      const usage = (await (await fetch(`${second.url}/v1/usage`, { headers: { authorization: `Bearer ${alice.raw}` } })).json()) as {
        totals: { requests: number; input_tokens: number; output_tokens: number; cost_usd: string };
      };
      expect(usage.totals).toMatchObject({ requests: 5, input_tokens: 20, output_tokens: 10 });
      expect(parseUsd(usage.totals.cost_usd)).toBe(charged);
    });

    it("a hit is admitted like the request: a key over its budget is refused even for a hit", async () => {
      const alice = await cachedAccount();
      const body = question(`budget ${randomUUID()}`);
      expect((await post(first, alice.raw, "/v1/chat/completions", body)).cache).toBe("miss");
      await first.app.ctx.store.db.updateTable("keys").set({ budget_cap_nano: 1n }).where("id", "=", alice.key.id).execute();
      await new Promise((r) => setTimeout(r, 100));
      const refused = await post(second, alice.raw, "/v1/chat/completions", body);
      expect(refused.status).toBe(402);
      const rows = await first.app.ctx.store.db.selectFrom("ledger").select("id").where("key_id", "=", alice.key.id).execute();
      expect(rows).toHaveLength(1);
    });
  });
}

describe("the response cache without a reachable Redis", () => {
  it("every request is a miss, served, and the failure counted", async () => {
    const mock = await startMockUpstream();
    mock.handler = async (_req, res) => json(res, 200, chatCompletion("Hello there", { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
    const gateway = await startGateway(config(mock.url, `test:${randomUUID()}:`, "free"), { env: { REDIS_URL: "redis://127.0.0.1:1" } });
    try {
      const alice = await gateway.createAccount();
      await gateway.app.ctx.store.cacheSettings.write(cacheSubject("key", alice.key.id), { ttlSeconds: 60, scope: "account", updatedAt: Date.now() });
      const body = question("redis down");
      for (let i = 0; i < 2; i++) expect(await post(gateway, alice.raw, "/v1/chat/completions", body)).toMatchObject({ status: 200, cache: "miss", cost: "0.00002" });
      expect(mock.requests).toHaveLength(2);
      expect(gateway.app.ctx.pipeline.responseCache!.counts().errors).toBeGreaterThanOrEqual(2);
    } finally {
      await gateway.close();
      await mock.close();
    }
  });
});

describe("the response cache's opt-in through the admin API, in memory", () => {
  it("a workspace turns it on for its keys, a key's own setting wins, gateway scope needs the operator, DELETE turns it off", async () => {
    const mock = await startMockUpstream();
    mock.handler = async (_req, res) => json(res, 200, chatCompletion("Hello there", { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
    const gateway = await startGateway(config(mock.url, "unused:", "free"));
    try {
      const { raw: token } = await gateway.app.ctx.store.adminTokens.create({ name: "cache", scopes: ["keys:read", "keys:write", "workspaces:read", "workspaces:write"] });
      const admin = async (method: string, path: string, body?: object) => {
        const response = await fetch(`${gateway.url}/admin/v1${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body && { "content-type": "application/json" }) },
          body: body && JSON.stringify(body),
        });
        return { status: response.status, body: (await response.json()) as { cache?: { ttl_seconds: number; scope: string } | null; error?: { param?: string } } };
      };
      const alice = await gateway.createAccount();
      const team = await gateway.app.ctx.store.workspaces.create("team", alice.account.id);
      const { key, raw } = await gateway.app.ctx.store.keys.create({ accountId: alice.account.id, workspaceId: team.id });

      expect((await admin("GET", `/keys/${key.id}/cache`)).body.cache).toBeNull();
      expect((await admin("PATCH", `/keys/nope/cache`, {})).status).toBe(404);
      const refused = await admin("PATCH", `/workspaces/${team.id}/cache`, { scope: "gateway" });
      expect(refused.status).toBe(400);
      expect(refused.body.error?.param).toBe("scope");
      expect((await admin("PATCH", `/workspaces/${team.id}/cache`, { ttl_seconds: 0 })).status).toBe(400);
      const on = await admin("PATCH", `/workspaces/${team.id}/cache`, {});
      expect(on).toMatchObject({ status: 200, body: { cache: { ttl_seconds: 3600, scope: "account" } } });

      const body = question("admin api");
      expect((await post(gateway, raw, "/v1/chat/completions", body)).cache).toBe("miss");
      await new Promise((r) => setTimeout(r, 50));
      const hit = await post(gateway, raw, "/v1/chat/completions", body);
      expect(hit).toMatchObject({ status: 200, cache: "hit", cost: "0.00" });
      expect(mock.requests).toHaveLength(1);
      // A free hit is still a ledger row: no tokens, no cost, marked by its provider.
      const rows = await gateway.app.ctx.store.db.selectFrom("ledger").selectAll().where("key_id", "=", key.id).orderBy("id").execute();
      expect(rows.map((r) => [r.provider, Number(r.input_tokens), BigInt(r.cost_nano)])).toEqual([
        ["mockai", 10, 20_000n],
        ["(cache)", 0, 0n],
      ]);
      // The request log marks the hit the same way.
      await gateway.app.ctx.pipeline.requestLog?.flush();
      const logged = await gateway.app.ctx.store.db.selectFrom("request_log").select(["provider", "cost_nano"]).where("key_id", "=", key.id).orderBy("id").execute();
      expect(logged.map((r) => r.provider)).toEqual(["mockai", "(cache)"]);

      // The key's own setting: off for it, whatever the workspace says.
      expect((await admin("DELETE", `/workspaces/${team.id}/cache`)).body.cache).toBeNull();
      expect((await post(gateway, raw, "/v1/chat/completions", body)).cache).toBeNull();
      expect((await admin("PATCH", `/keys/${key.id}/cache`, { ttl_seconds: 120 })).body.cache).toMatchObject({ ttl_seconds: 120, scope: "account" });
      expect((await post(gateway, raw, "/v1/chat/completions", body)).cache).toBe("hit");
      const audit = await gateway.app.ctx.store.db.selectFrom("audit_log").select("action").where("target_id", "in", [key.id, team.id]).execute();
      expect(audit.map((a) => a.action).sort()).toEqual(["key.cache", "workspace.cache", "workspace.cache"]);
    } finally {
      await gateway.close();
      await mock.close();
    }
  });
});

describe("the response cache on the Responses and Messages routes, in memory", () => {
  it("a buffered Responses request and a streamed Messages request hit in their own format", async () => {
    const mock = await startMockUpstream();
    mock.handler = async (req, res) => {
      if (req.body?.stream) return chatStream(req, res, ["Hello", " there"], { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
      return json(res, 200, chatCompletion("Hello there", { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
    };
    const gateway = await startGateway(config(mock.url, "unused:", "0.1"));
    try {
      const alice = await gateway.createAccount();
      await gateway.app.ctx.store.cacheSettings.write(cacheSubject("key", alice.key.id), { ttlSeconds: 60, scope: "account", updatedAt: Date.now() });
      const responsesBody = { model: "gpt-mock", input: "responses route", max_output_tokens: 50, store: false };
      const missR = await post(gateway, alice.raw, "/v1/responses", responsesBody);
      expect(missR).toMatchObject({ status: 200, cache: "miss" });
      await new Promise((r) => setTimeout(r, 50));
      const hitR = await post(gateway, alice.raw, "/v1/responses", responsesBody);
      expect(hitR).toMatchObject({ status: 200, cache: "hit", cost: "0.000002" });
      const output = (text: string) => (JSON.parse(text) as { output: unknown }).output;
      expect(output(hitR.text)).toEqual(output(missR.text));
      expect((JSON.parse(hitR.text) as { usage: { cost: string } }).usage.cost).toBe("0.000002");

      const messagesBody = { model: "gpt-mock", max_tokens: 50, stream: true, messages: [{ role: "user", content: "messages route" }] };
      const missM = await post(gateway, alice.raw, "/v1/messages", messagesBody);
      expect(missM).toMatchObject({ status: 200, cache: "miss" });
      await new Promise((r) => setTimeout(r, 50));
      const calls = mock.requests.length;
      const hitM = await post(gateway, alice.raw, "/v1/messages", messagesBody);
      expect(hitM).toMatchObject({ status: 200, cache: "hit" });
      expect(mock.requests.length).toBe(calls);
      const eventNames = (text: string) => [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
      expect(eventNames(hitM.text)).toEqual(eventNames(missM.text));
      expect(eventNames(hitM.text)).toContain("message_stop");
      // The same question on the Chat route is another format's entry: a miss.
      expect((await post(gateway, alice.raw, "/v1/chat/completions", { ...messagesBody, stream: false })).cache).toBe("miss");
    } finally {
      await gateway.close();
      await mock.close();
    }
  });
});
