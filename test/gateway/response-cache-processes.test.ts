// The response cache across two gateway PROCESSES (the built `gateway serve`) sharing one database and
// one Redis: the second process serves the first one's answer to the same account and not to another.
import { randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { cacheSubject } from "../../src/store/cache-settings-store.js";
import { killAll, PROCESS_TEST_TIMEOUT_MS, startGateway, waitUntilHealthy, type GatewayProcess } from "../cli/gateway-process.js";
import { createTestDatabase } from "../support/databases.js";
import { chatCompletion, json, startMockUpstream } from "../support/mock-upstream.js";

afterAll(() => killAll());

async function ask(gateway: GatewayProcess, raw: string, content: string): Promise<{ status: number; cache: string | null }> {
  const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content }], max_tokens: 20 }),
  });
  await response.text();
  return { status: response.status, cache: response.headers.get("x-gateway-cache") };
}

describe("the response cache across two gateway processes through Redis", () => {
  it("the second process serves the same account's answer; another account misses", { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const mock = await startMockUpstream();
    mock.handler = async (_req, res) => json(res, 200, chatCompletion("Hello there", { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
    const database = await createTestDatabase("sqlite");
    const dir = mkdtempSync(join(tmpdir(), "gw-cache-"));
    writeFileSync(
      join(dir, "gateway.config.yaml"),
      `providers:\n  mockai: { type: openai, base_url: "${mock.url}/v1", keys: ["sk-mock-openai-key-0001"] }\nmodels:\n  - { id: gpt-mock, kind: chat, provider: mockai, pricing: { input_per_mtok: "1", output_per_mtok: "2" } }\ntiers:\n  standard: { models: ["*"] }\nserver: { default_tier: standard }\ncache: { hit_price: "0.1", key_prefix: "test:${randomUUID()}:" }\n`,
    );
    const env = { ...database.env, GATEWAY_CONFIG: join(dir, "gateway.config.yaml"), LOG_LEVEL: "warn", REDIS_URL: "redis://127.0.0.1:6379" };
    const store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
    try {
      const alice = await store.accounts.create({ email: "alice@example.com", tier: "standard", balance: 10_000_000_000n });
      const bob = await store.accounts.create({ email: "bob@example.com", tier: "standard", balance: 10_000_000_000n });
      const aliceKey = await store.keys.create({ accountId: alice.id });
      const bobKey = await store.keys.create({ accountId: bob.id });
      for (const key of [aliceKey, bobKey]) await store.cacheSettings.write(cacheSubject("key", key.key.id), { ttlSeconds: 600, scope: "account", updatedAt: Date.now() });
      const gateways = await Promise.all([startGateway(dir, env), startGateway(dir, env)]);
      await Promise.all(gateways.map((g) => waitUntilHealthy(g)));
      const [first, second] = gateways;

      expect(await ask(first, aliceKey.raw, "across processes")).toEqual({ status: 200, cache: "miss" });
      await new Promise((r) => setTimeout(r, 200));
      expect(await ask(second, aliceKey.raw, "across processes")).toEqual({ status: 200, cache: "hit" });
      expect(await ask(second, bobKey.raw, "across processes")).toEqual({ status: 200, cache: "miss" });
      expect(mock.requests).toHaveLength(2);
      const rows = await store.db
        .selectFrom("ledger")
        .select(["provider", "cost_nano", "input_tokens"])
        .where("account_id", "=", alice.id)
        .where("kind", "=", "usage")
        .orderBy("id")
        .execute();
      expect(rows.map((r) => [r.provider, BigInt(r.cost_nano), Number(r.input_tokens)])).toEqual([
        ["mockai", 20_000n, 10],
        ["(cache)", 2_000n, 0],
      ]);
    } finally {
      killAll();
      await store.close();
      await database.drop();
      await mock.close();
    }
  });
});
