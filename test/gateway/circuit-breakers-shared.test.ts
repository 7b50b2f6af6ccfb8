// Two gateway processes on one database agree on an open circuit breaker within a second: once one
// of them has opened a key's breaker, the other sends that key nothing, though it never saw it fail.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { keyFingerprint } from "../../src/upstreams/upstream-health.js";
import { killAll, PROCESS_TEST_TIMEOUT_MS, startGateway as spawnGateway, waitFor, waitUntilHealthy } from "../cli/gateway-process.js";
import { createTestDatabase, DATABASE_KINDS } from "../support/databases.js";
import { mockConfig } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream } from "../support/mock-upstream.js";

const BAD = "sk-mock-key-bad-aaaaaaaa";
const GOOD = "sk-mock-key-good-bbbbbbb";
const HEALTH = `
upstream_health:
  min_requests: 4
  open_ms: 60000
`;

afterAll(() => killAll());

for (const kind of DATABASE_KINDS.filter((k) => k === "postgres")) {
  describe(`circuit breakers shared by two gateway processes on ${kind}`, () => {
    it("a breaker opened by one process is open in the other within a second", { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
      const mock = await startMockUpstream();
      mock.handler = (req, res) => {
        if (req.key === BAD) res.socket!.destroy();
        else json(res, 200, chatCompletion("ok"));
      };
      const database = await createTestDatabase(kind);
      const dir = mkdtempSync(join(tmpdir(), "gw-breakers-"));
      const configPath = join(dir, "gateway.config.yaml");
      writeFileSync(configPath, mockConfig({ openaiUrl: mock.url, openaiKeys: [BAD, GOOD], extra: HEALTH }));
      const env = { ...database.env, GATEWAY_CONFIG: configPath, LOG_LEVEL: "warn" };
      const store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
      const account = await store.accounts.create({ email: `breakers-${kind}@example.com`, tier: "standard", balance: 10_000_000_000n });
      const { raw } = await store.keys.create({ accountId: account.id });
      const ask = async (baseUrl: string) => {
        const response = await fetch(`${baseUrl}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], max_tokens: 10 }),
        });
        await response.arrayBuffer();
        return response.status;
      };
      const badRow = () =>
        store.db
          .selectFrom("upstream_health")
          .select("state")
          .where("scope", "=", `key:${keyFingerprint("mockai", BAD)}`)
          .executeTakeFirst();
      try {
        const [first, second] = await Promise.all([spawnGateway(dir, env), spawnGateway(dir, env)]);
        await Promise.all([waitUntilHealthy(first), waitUntilHealthy(second)]);

        for (let i = 0; i < 8; i++) expect(await ask(first.baseUrl)).toBe(200);
        expect(mock.requests.filter((r) => r.key === BAD).length).toBe(4);
        await waitFor(
          async () => (await badRow())?.state === "open",
          5_000,
          () => "the first process never wrote the open breaker",
        );

        await new Promise((resolve) => setTimeout(resolve, 1_000));
        mock.requests.length = 0;
        for (let i = 0; i < 6; i++) expect(await ask(second.baseUrl)).toBe(200);
        expect(mock.requests.map((r) => r.key)).toEqual(Array(6).fill(GOOD));
      } finally {
        killAll();
        await store.close();
        await mock.close();
        await database.drop();
      }
    });
  });
}
