// `node --import tsx bench/cache-hit.ts [--requests 300] [--redis]`: the response cache's hit latency
// against a miss's (ADR 0044), one in-process gateway on a new SQLite database and a mock upstream on
// 127.0.0.1 that answers at once: requests one at a time, alternating a new body (a miss: admission,
// the upstream, settlement, a store) and a repeated one (a hit: admission, settlement at the hit
// price, the stored answer). Prints the median and interquartile range of each, in ms; --redis uses
// REDIS_URL (redis://127.0.0.1:6379 by default) instead of the in-process backend.
import { createServer } from "node:http";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import pino from "pino";
import { createApp } from "../src/app.js";
import { loadConfig } from "../src/config/load.js";
import { cacheSubject } from "../src/store/cache-settings-store.js";
import { median } from "./lib/stats.js";

const args = process.argv.slice(2);
const requests = Number(args.includes("--requests") ? args[args.indexOf("--requests") + 1] : 300) || 300;
const redis = args.includes("--redis");

const upstream = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: "c",
        object: "chat.completion",
        created: 1,
        model: "m",
        choices: [{ index: 0, message: { role: "assistant", content: "Hello there" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      }),
    );
  });
});
await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;

const dir = mkdtempSync(join(tmpdir(), "bench-cache-"));
writeFileSync(
  join(dir, "gateway.config.yaml"),
  `providers:\n  mock: { type: openai, base_url: "${upstreamUrl}/v1", keys: ["sk-bench-0001"] }\nmodels:\n  - { id: m, kind: chat, provider: mock, pricing: { input_per_mtok: "1", output_per_mtok: "2" } }\ntiers:\n  standard: { models: ["*"] }\nserver: { default_tier: standard }\nrequest_log: { enabled: false }\ncache: { hit_price: "0.1", key_prefix: "bench:${randomUUID()}:" }\n`,
);
const env = { GATEWAY_CONFIG: join(dir, "gateway.config.yaml"), GATEWAY_DATA_DIR: dir, PORT: "0", ...(redis && { REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" }) };
const app = await createApp(loadConfig(env, dir), { logger: pino({ level: "silent" }) });
const url = await app.server.listen({ host: "127.0.0.1", port: 0 });
const account = await app.ctx.store.accounts.create({ email: "bench@example.com", tier: "standard", balance: 1_000_000_000_000n });
const { key, raw } = await app.ctx.store.keys.create({ accountId: account.id });
await app.ctx.store.cacheSettings.write(cacheSubject("key", key.id), { ttlSeconds: 600, scope: "account", updatedAt: Date.now() });

async function timed(content: string): Promise<{ ms: number; cache: string | null }> {
  const started = performance.now();
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content }], max_tokens: 20 }),
  });
  await response.text();
  return { ms: performance.now() - started, cache: response.headers.get("x-gateway-cache") };
}

await timed("warm-up");
const misses: number[] = [];
const hits: number[] = [];
for (let i = 0; i < requests; i++) {
  const miss = await timed(`miss ${i}`);
  if (miss.cache === "miss") misses.push(miss.ms);
  const hit = await timed("warm-up");
  if (hit.cache === "hit") hits.push(hit.ms);
}
const quartiles = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${median(sorted).toFixed(2)} ms [${sorted[Math.floor(sorted.length / 4)]!.toFixed(2)}–${sorted[Math.floor((sorted.length * 3) / 4)]!.toFixed(2)}] (n=${sorted.length})`;
};
console.log(`backend ${redis ? "redis" : "memory"}: miss ${quartiles(misses)}; hit ${quartiles(hits)}`);
await app.close();
upstream.close();
