// GET /metrics under `gateway serve --workers 2` (decision 0026): requests spread over both workers
// (checked in the log lines' `worker` field), then one scrape, on the main port and on metrics.listen,
// reports the whole server: the request counter equals what was sent, per-process metrics carry a
// `worker` label per worker, the holds gauge is taken once (not summed), the exposition parses, and the
// token is still required. A worker killed after a scrape keeps its counted requests in the next one.
import { request } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { createTestDatabase } from "../support/databases.js";
import { mockConfig } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream } from "../support/mock-upstream.js";
import { parseExposition, seriesOf, valueOf, type Families } from "../support/prometheus.js";
import { freePort, killAll, startGateway, waitFor, waitUntilHealthy, type GatewayProcess } from "./gateway-process.js";

afterAll(() => killAll());

const TOKEN = "metrics-token-0123456789abcdef";
const ROUTE = "/v1/chat/completions";
const SENT = 24;

/** One chat completion on a connection of its own (agent: false): round-robin hands each to the next worker. */
function chatOnNewConnection(baseUrl: string, apiKey: string): Promise<number> {
  const body = JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }] });
  return new Promise((resolve, reject) => {
    const req = request(
      `${baseUrl}${ROUTE}`,
      { method: "POST", agent: false, headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, timeout: 10_000 },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function scrape(url: string, token: string | null = TOKEN): Promise<{ status: number; families: Families | null }> {
  const response = await fetch(`${url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await response.text();
  if (response.status !== 200) return { status: response.status, families: null };
  expect(response.headers.get("content-type")).toContain("text/plain");
  return { status: 200, families: parseExposition(text) };
}

/** Chat requests per worker id, from the JSON log lines on stdout. */
function requestsPerWorker(gateway: GatewayProcess): Map<number, number> {
  const counts = new Map<number, number>();
  for (const line of gateway.stdout().split("\n")) {
    if (!line.startsWith("{")) continue;
    const entry = JSON.parse(line) as { worker?: number; path?: string; msg?: string };
    if (entry.worker === undefined || entry.msg !== "request" || entry.path !== ROUTE) continue;
    counts.set(entry.worker, (counts.get(entry.worker) ?? 0) + 1);
  }
  return counts;
}

describe("GET /metrics with --workers 2", () => {
  it("reports every worker in one scrape, on the main port and on metrics.listen, and keeps a killed worker's counts", { timeout: 150_000 }, async () => {
    const mock = await startMockUpstream();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("Hello"));
    const database = await createTestDatabase("sqlite");
    const dir = mkdtempSync(join(tmpdir(), "gw-workers-metrics-"));
    const metricsPort = await freePort();
    writeFileSync(join(dir, "gateway.config.yaml"), `${mockConfig({ openaiUrl: mock.url })}\nmetrics:\n  token_env: GW_TEST_METRICS_TOKEN\n  listen: "127.0.0.1:${metricsPort}"\n`);
    const store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
    const account = await store.accounts.create({ email: "metrics-workers@example.com", tier: "standard", balance: 1_000_000_000n });
    const { raw } = await store.keys.create({ accountId: account.id });
    try {
      const gateway = await startGateway(dir, { ...database.env, GATEWAY_CONFIG: join(dir, "gateway.config.yaml"), GW_TEST_METRICS_TOKEN: TOKEN }, { workers: 2 });
      await waitUntilHealthy(gateway, 60_000);
      await waitFor(
        () => gateway.stderr().includes("model-gateway listening"),
        20_000,
        () => `no start-up lines:\n${gateway.stderr()}`,
      );
      const metricsUrl = `http://127.0.0.1:${metricsPort}`;

      for (let i = 0; i < SENT; i++) expect(await chatOnNewConnection(gateway.baseUrl, raw)).toBe(200);
      // Both workers answered some (round-robin), so a one-worker scrape could not show them all.
      await waitFor(
        () => [...requestsPerWorker(gateway).values()].reduce((a, b) => a + b, 0) >= SENT,
        5_000,
        () => `log lines: ${JSON.stringify([...requestsPerWorker(gateway)])}\n${gateway.stdout().slice(-2000)}`,
      );
      const perWorker = requestsPerWorker(gateway);
      expect([...perWorker.keys()].sort()).toEqual([1, 2]);
      expect(Math.min(...perWorker.values())).toBeGreaterThan(0);

      // The token is still required, on both listeners.
      expect((await scrape(gateway.baseUrl, null)).status).toBe(401);
      expect((await scrape(gateway.baseUrl, "wrong-token-0123456789")).status).toBe(401);
      expect((await scrape(metricsUrl, null)).status).toBe(401);

      for (const url of [gateway.baseUrl, metricsUrl]) {
        const { status, families } = await scrape(url);
        expect(status).toBe(200);
        const f = families!;
        expect(valueOf(f, "gateway_requests_total", { route: ROUTE, status: "200" })).toBe(SENT);
        expect(valueOf(f, "gateway_requests_total", { route: ROUTE })).toBe(SENT);
        expect(valueOf(f, "gateway_workers_reporting")).toBe(2);
        // Summed families carry no worker label; per-process ones one series per worker.
        expect(seriesOf(f, "gateway_requests_total").every((labels) => labels.worker === undefined)).toBe(true);
        expect(
          seriesOf(f, "process_resident_memory_bytes")
            .map((labels) => labels.worker)
            .sort(),
        ).toEqual(["1", "2"]);
        expect(
          seriesOf(f, "gateway_circuit_breakers")
            .filter((labels) => labels.state === "closed")
            .map((labels) => labels.worker)
            .sort(),
        ).toEqual(["1", "2"]);
        // Read from the shared database: once, whatever the number of workers.
        expect(seriesOf(f, "gateway_holds_outstanding")).toEqual([{}]);
        expect(valueOf(f, "gateway_holds_outstanding")).toBe(0);
      }

      // A worker killed after that scrape: its requests stay counted (the counter never goes down).
      const victim = Number(/^worker 1 \(pid (\d+)\) listening$/m.exec(gateway.stderr())![1]);
      process.kill(victim, "SIGKILL");
      await waitFor(
        () => /^worker 3 \(pid \d+\) listening$/m.test(gateway.stderr()),
        15_000,
        () => `no replacement worker:\n${gateway.stderr()}`,
      );
      const after = (await scrape(gateway.baseUrl)).families!;
      expect(valueOf(after, "gateway_requests_total", { route: ROUTE })).toBe(SENT);
      expect(
        seriesOf(after, "process_resident_memory_bytes")
          .map((labels) => labels.worker)
          .sort(),
      ).toEqual(["2", "3"]);

      gateway.child.kill("SIGTERM");
      expect(await gateway.exited(20_000)).toEqual({ code: 0, signal: null });
    } finally {
      killAll();
      await store.close();
      await mock.close();
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
