// `node --import tsx bench/billing-pair.ts [--pairs 20000] [--concurrency 1 | --rate 1000] [--limits] [--database postgres://…]`
// What the billing store costs per request on its own, without HTTP: sequential admission + settlement
// pairs for one account and key, each awaited before the next, so every group-commit batch holds one
// operation (as at 1,000 req/s in the gateway). Prints wall time and this process's CPU (user, system)
// per pair (on PostgreSQL also the server's processes' CPU, from /proc). `--concurrency N` keeps N pairs in flight instead (batches of up to N operations, as under
// wrk's 50 connections). `--rate R` starts R pairs a second whatever the earlier ones do (an open loop,
// as the gateway's latency runs at 1,000 req/s) and prints the admission's, the settlement's and the
// pair's p50 and p99 and the operations per group-commit batch. SQLite by default (a fresh file with background checkpoints, as `gateway serve` opens it);
// with --database, a fresh PostgreSQL database created and dropped here. `--limits`: the key and the
// account get rpm, tpm and concurrency limits too high to refuse (as the bench's "limits enabled").
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StoreBilling } from "../src/billing/billing-store.js";
import { applicableLimits, limitSubjectsOf, subjectLimitsFromInput, tierLimitsOf } from "../src/billing/traffic-limits.js";
import { openStore } from "../src/store/index.js";
import { createBenchDatabase, dropBenchDatabase } from "./lib/servers.js";
import { pairModel, runPairs, runPairsAtRate } from "./lib/billing-pairs.js";
import { postgresCpuMicros } from "./lib/postgres-cpu.js";
import { summarize } from "./lib/stats.js";

const args = process.argv.slice(2);
const valueOf = (flag: string, fallback: string) => {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1]! : fallback;
};
const pairs = Number(valueOf("--pairs", "20000"));
const adminUrl = valueOf("--database", "");
const concurrency = Number(valueOf("--concurrency", "1"));
const rate = Number(valueOf("--rate", "0"));
const withLimits = args.includes("--limits");
const NEVER_REFUSING = subjectLimitsFromInput({ requests_per_minute: 10_000_000, tokens_per_minute: 1_000_000_000_000, concurrent_requests: 1_000_000 });
const WARM_UP_PAIRS = 2000;

const dir = mkdtempSync(join(tmpdir(), "gw-billing-pair-"));
const model = pairModel(dir);
const pgDatabase = adminUrl ? await createBenchDatabase(adminUrl, "gw_billing_pair") : null;
const databaseUrl = pgDatabase?.url ?? null;
const store = await openStore({
  databaseUrl,
  sqlitePath: join(dir, "gw.db"),
  secret: "bench-secret-0123456789abcdefghijklmnop",
  backgroundCheckpoints: { onError: (message) => console.error(`checkpoint failed: ${message}`) },
});
try {
  let batches = 0;
  const billing = new StoreBilling(store.handle, { onBatch: () => (batches += 1) });
  const account = await store.accounts.create({ email: "pair@example.com", tier: "standard", balance: 1_000_000_000_000_000n });
  const { key } = await store.keys.create({ accountId: account.id });
  const limits = withLimits
    ? applicableLimits(tierLimitsOf(undefined), limitSubjectsOf({ key: { id: key.id, limits: NEVER_REFUSING }, account: { id: account.id, limits: NEVER_REFUSING } }), "pair-model")
    : undefined;
  const subject = { billing, accountId: account.id, keyId: key.id, model, limits };
  const progress = (done: number) => {
    if (done % 5000 === 0) process.stderr.write(`  ${done}/${pairs} pairs\n`);
  };
  if (rate > 0) await runPairsAtRate(subject, WARM_UP_PAIRS, rate);
  else await runPairs(subject, WARM_UP_PAIRS, concurrency);
  const cpuBefore = process.cpuUsage();
  const serverCpuBefore = databaseUrl ? postgresCpuMicros() : null;
  batches = 0;
  const started = process.hrtime.bigint();
  const times = rate > 0 ? await runPairsAtRate(subject, pairs, rate) : await runPairs(subject, pairs, concurrency, progress);
  const wallUs = Number(process.hrtime.bigint() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const serverCpuAfter = serverCpuBefore === null ? null : postgresCpuMicros();
  const serverCpu = serverCpuBefore === null || serverCpuAfter === null ? "" : `, PostgreSQL server CPU ${((serverCpuAfter - serverCpuBefore) / pairs).toFixed(1)} µs/pair`;
  const database = databaseUrl ? "PostgreSQL" : "SQLite";
  const load = rate > 0 ? `${rate} a second` : `${concurrency} in flight`;
  console.log(
    `${database}, ${pairs} admission+settlement pairs, ${load}${withLimits ? ", limits on key and account" : ""}: wall ${(wallUs / pairs).toFixed(1)} µs/pair, CPU user ${(cpu.user / pairs).toFixed(1)} + system ${(cpu.system / pairs).toFixed(1)} µs/pair${serverCpu}`,
  );
  if (times) {
    const ms = (values: number[]) => {
      const { p50, p99 } = summarize(values);
      return `p50 ${(p50 / 1000).toFixed(2)} / p99 ${(p99 / 1000).toFixed(2)} ms`;
    };
    console.log(`  admission ${ms(times.admit)}, settlement ${ms(times.settle)}, pair ${ms(times.pair)}; ${((2 * pairs) / batches).toFixed(2)} operations a batch`);
  }
} finally {
  await store.close();
  if (pgDatabase) await dropBenchDatabase(adminUrl, pgDatabase.name);
  rmSync(dir, { recursive: true, force: true });
}
