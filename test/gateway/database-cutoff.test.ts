// A gateway cut off from PostgreSQL by a silent partition (issue 44): a TCP proxy between them stops
// forwarding without closing anything, as dropped packets would. Requests sent meanwhile, with a key
// the gateway has cached and with one it has never seen, buffered and streamed, are each refused with
// the catalogue's 503 and an X-Request-ID within the configured timeouts, and charge nothing; once
// the partition heals, requests are answered again within seconds and the books are exact.
// test/deploy/multi-host.test.ts plays the same with network namespaces and nftables.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { killAll, PROCESS_TEST_TIMEOUT_MS, startGateway, waitUntilHealthy } from "../cli/gateway-process.js";
import { compareWithLedger, settledBooks } from "../deploy/netns/books.js";
import { chat, type Attempt } from "../deploy/netns/load-client.js";
import { startBlackholeProxy } from "../support/blackhole-proxy.js";
import { createTestDatabase, DATABASE_KINDS } from "../support/databases.js";
import { mockConfig } from "../support/gateway.js";
import { chatCompletion, chatStream, json, startMockUpstream } from "../support/mock-upstream.js";

/** DATABASE_CONNECT_TIMEOUT_MS and DATABASE_QUERY_TIMEOUT_MS of the gateway under test. */
const TIMEOUT_MS = 2000;
/**
 * The longest a refusal may take: one wait on the database (a connection, or one statement's
 * answer), as each request makes at most one while the database is out of reach, and a margin for a
 * busy machine. Before the fix a request waited for two or three (issue 44).
 */
const REFUSAL_BOUND_MS = TIMEOUT_MS + 1500;
/** Probes are sent for this long from the cut's start (the response cache's settings, kept 2 s, run out meanwhile)... */
const PROBING_MS = 4000;
/** ...and the cut lasts until the last of them must have been refused: one that waits for the heal is answered late instead. */
const CUT_MS = PROBING_MS + REFUSAL_BOUND_MS + 500;
/** After the heal, requests are answered again within this. */
const RECOVERY_BOUND_MS = 5000;
/** How often the test checks /readyz during the cut, as a load balancer would (HAProxy, docs/operations.md). */
const READINESS_CHECK_MS = 500;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const show = (value: unknown) => JSON.stringify(value, (_key, field: unknown) => (typeof field === "bigint" ? field.toString() : field));

afterAll(() => killAll());

describe.runIf(DATABASE_KINDS.includes("postgres"))("a gateway cut off from PostgreSQL", () => {
  it("refuses fast with 503 service_unavailable, charges nothing, and serves again after the heal", { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const mock = await startMockUpstream();
    mock.handler = (req, res) => (req.body?.stream ? chatStream(req, res, ["Fine", ", thanks."]) : json(res, 200, chatCompletion("Fine, thanks.")));
    const database = await createTestDatabase("postgres");
    const direct = new URL(database.databaseUrl!);
    const proxy = await startBlackholeProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const viaProxy = new URL(direct);
    viaProxy.host = proxy.address;
    const dir = mkdtempSync(join(tmpdir(), "gw-cutoff-"));
    const configPath = join(dir, "gateway.config.yaml");
    writeFileSync(configPath, mockConfig({ openaiUrl: mock.url }));
    const store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
    try {
      const account = await store.accounts.create({ email: "cutoff@example.com", tier: "standard", balance: 10_000_000_000n });
      const { raw: warmKey } = await store.keys.create({ accountId: account.id });
      const { raw: coldKey } = await store.keys.create({ accountId: account.id });
      const before = (await store.accounts.get(account.id))!.balance;
      const gateway = await startGateway(dir, {
        ...database.env,
        DATABASE_URL: viaProxy.toString(),
        GATEWAY_CONFIG: configPath,
        LOG_LEVEL: "warn",
        DATABASE_CONNECT_TIMEOUT_MS: String(TIMEOUT_MS),
        DATABASE_QUERY_TIMEOUT_MS: String(TIMEOUT_MS),
      });
      await waitUntilHealthy(gateway);
      const ask = (via: string, key: string, stream: boolean) => chat(gateway.baseUrl, via, key, { stream, model: "gpt-mock" });

      const attempts: Attempt[] = [];
      for (const stream of [false, true, false, true]) attempts.push(await ask("before the cut", warmKey, stream));
      expect(
        attempts.map((a) => a.outcome),
        show(attempts),
      ).toEqual(["answered", "answered", "answered", "answered"]);

      proxy.blackhole();
      const cutAt = Date.now();
      const readiness = setInterval(() => {
        fetch(`${gateway.baseUrl}/readyz`, { signal: AbortSignal.timeout(1000) })
          .then((response) => response.arrayBuffer())
          .catch(() => undefined);
      }, READINESS_CHECK_MS);
      const probes: Promise<Attempt>[] = [];
      for (let i = 0; Date.now() - cutAt < PROBING_MS; i++) {
        const key = i % 4 < 2 ? warmKey : coldKey;
        probes.push(ask(`cut, ${key === warmKey ? "cached" : "new"} key`, key, i % 2 === 1));
        await sleep(250);
      }
      await sleep(cutAt + CUT_MS - Date.now());
      clearInterval(readiness);
      proxy.heal();
      const healedAt = Date.now();
      const cut = await Promise.all(probes);
      attempts.push(...cut);
      const latencies = cut.map((a) => `${a.via}${a.stream ? " stream" : ""}: ${a.status} in ${a.latencyMs} ms`);
      process.stderr.write(`database cut-off probes:\n  ${latencies.join("\n  ")}\n`);

      for (const probe of cut) {
        expect([probe.outcome, probe.status, probe.errorType, probe.errorCode], show(probe)).toEqual(["refused", 503, "service_unavailable", "database_unavailable"]);
        expect(probe.requestId, show(probe)).toMatch(/\S/);
        expect(probe.latencyMs, latencies.join("\n")).toBeLessThan(REFUSAL_BOUND_MS);
      }

      // Healed: answered again within seconds, with either key, buffered and streamed.
      for (;;) {
        const attempt = await ask("after the heal", warmKey, false);
        attempts.push(attempt);
        if (attempt.outcome === "answered") break;
        expect(Date.now() - healedAt, show(attempt)).toBeLessThan(RECOVERY_BOUND_MS);
        await sleep(200);
      }
      process.stderr.write(`database cut-off: answered again ${Date.now() - healedAt} ms after the heal\n`);
      const after = [await ask("after the heal", warmKey, true), await ask("after the heal", coldKey, false), await ask("after the heal", coldKey, true)];
      attempts.push(...after);
      expect(
        after.map((a) => a.outcome),
        show(after),
      ).toEqual(["answered", "answered", "answered"]);

      const books = await settledBooks(store, account.id, 0, 10_000);
      expect(compareWithLedger(attempts, books)).toEqual([]);
      expect(books.holds).toEqual([]);
      expect(before - books.balance).toBe(books.usageSum);
    } finally {
      killAll();
      await proxy.close();
      await store.close();
      await mock.close();
      await database.drop();
    }
  });
});
