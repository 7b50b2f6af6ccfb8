// `node --import tsx bench/alerts-hanging.ts [--requests 200]`: whether alert endpoints that never
// answer slow requests down (ADR 0040). One in-process gateway on a new SQLite file serving the demo
// model; each request uses a fresh account and key whose tiny cap it crosses (50, 80 and 100%: four events). Run A
// has no subscription; run B has 10 subscriptions to an endpoint that accepts and never answers, every
// event type, so each request leaves about 40 hanging deliveries behind it. Prints each run's median
// and p95 latency (ms) and B's median over A's.
import { createServer, type ServerResponse } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { createApp } from "../src/app.js";
import { loadConfig } from "../src/config/load.js";
import { ALERT_EVENT_TYPES } from "../src/core/alert-events.js";
import { median } from "./lib/stats.js";

const args = process.argv.slice(2);
const requests = Number(args.includes("--requests") ? args[args.indexOf("--requests") + 1] : 200) || 200;

const hanging: ServerResponse[] = [];
const receiver = createServer((_req, res) => void hanging.push(res));
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

async function run(subscriptions: number): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), "gw-bench-alerts-"));
  writeFileSync(join(dir, "gateway.config.yaml"), `demo: true\nalerts:\n  allowed_http_hosts: ["127.0.0.1"]\n  reports: false\nledger_verify: { interval_s: 0 }\n`);
  const env = { GATEWAY_CONFIG: join(dir, "gateway.config.yaml"), GATEWAY_DATA_DIR: dir, GATEWAY_SECRET: "bench-secret-0123456789abcdef", PORT: "0", LOG_LEVEL: "warn" };
  const app = await createApp(loadConfig(env, dir), { logger: pino({ level: "warn" }) });
  const url = await app.server.listen({ host: "127.0.0.1", port: 0 });
  const store = app.ctx.store;
  for (let i = 0; i < subscriptions; i++) {
    await store.alerts.create({ workspaceId: null, url: hookUrl, format: "json", events: [...ALERT_EVENT_TYPES], description: null, createdBy: "bench" });
  }
  await app.alerting.watcher.refreshActive();
  const latencies: number[] = [];
  for (let i = 0; i < requests; i++) {
    // An account per key: accounts have a key limit.
    const account = await store.accounts.create({ email: `bench-${subscriptions}-${i}@example.com`, tier: app.ctx.config.defaultTier, balance: 100_000_000_000n });
    const { raw } = await store.keys.create({ accountId: account.id, budgetCap: 10_000n });
    const started = performance.now();
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "demo-fast", messages: [{ role: "user", content: "Hi" }], max_tokens: 16 }),
    });
    await response.arrayBuffer();
    latencies.push(performance.now() - started);
  }
  const events = await store.db
    .selectFrom("alert_deliveries")
    .select((eb) => eb.fn.countAll<bigint>().as("n"))
    .executeTakeFirstOrThrow();
  console.log(`  ${subscriptions} subscriptions: ${String(events.n)} deliveries queued`);
  await app.close();
  rmSync(dir, { recursive: true, force: true });
  return latencies;
}

const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.95)]!;
const a = await run(0);
const b = await run(10);
console.log(`A (no subscription):          median ${median(a).toFixed(2)} ms, p95 ${p95(a).toFixed(2)} ms`);
console.log(`B (10 hanging subscriptions): median ${median(b).toFixed(2)} ms, p95 ${p95(b).toFixed(2)} ms`);
console.log(`B / A median: ${(median(b) / median(a)).toFixed(2)}`);
for (const res of hanging) res.destroy();
receiver.closeAllConnections();
receiver.close();
