// scratch: sequential admit+settle on SQLite, batches of one (as at 1,000 req/s)
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StoreBilling } from "../src/billing/billing-store.js";
import { newId } from "../src/core/ids.js";
import { openStore } from "../src/store/index.js";
import { BENCH_MODEL } from "./lib/constants.js";

const dir = mkdtempSync(join(tmpdir(), "mb-"));
const store = await openStore({ databaseUrl: null, sqlitePath: join(dir, "gw.db"), secret: "test-secret-0123456789", migrate: true, backgroundCheckpoints: { onError: console.error } });
for (const p of (process.env.PRAGMAS ?? "").split(";").filter(Boolean)) store.handle.sqlite!.pragma(p);
const MODEL: any = { id: "m", kind: "chat", provider: { name: "mock" }, pricing: { inputPerMtok: 1_000_000_000n, cachedInputPerMtok: 500_000_000n, outputPerMtok: 2_000_000_000n, perImage: new Map(), perVideoSecond: 0n }, tiers: ["default"], defaultOutputTokens: 256 };
const usage = (i: number, o: number) => ({ inputTokens: i, cachedInputTokens: 0, outputTokens: o, reasoningTokens: 0, estimated: false });
if (process.env.SCHEMA) store.handle.sqlite!.exec(process.env.SCHEMA);
const billing = new StoreBilling(store.handle);
const account = await store.accounts.create({ email: "a@example.com", tier: "default", balance: 1_000_000_000_000_000n });
const { key } = await store.keys.create({ accountId: account.id });
const N = Number(process.env.N ?? 20000);
async function one() {
  const hold = await billing.admit({ requestId: newId("req"), accountId: account.id, keyId: key.id, model: MODEL, route: "chat", projectedInputTokens: 20, projectedOutputTokens: 256 });
  await billing.settle(hold, usage(20, 9), "mock");
}
for (let i = 0; i < 2000; i++) await one();
const c0 = process.cpuUsage(); const t0 = process.hrtime.bigint();
for (let i = 0; i < N; i++) await one();
const t1 = process.hrtime.bigint(); const c1 = process.cpuUsage(c0);
console.log(`wall ${(Number(t1 - t0) / 1000 / N).toFixed(1)} µs/pair, cpu user ${(c1.user / N).toFixed(1)} sys ${(c1.system / N).toFixed(1)} µs/pair`);
await billing.stopSweeper(); await store.close();
