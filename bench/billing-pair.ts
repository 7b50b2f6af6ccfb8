// `node --import tsx bench/billing-pair.ts [--pairs 20000] [--concurrency 1 | --rate 1000] [--limits] [--database postgres://… [--stores 2 [--account-each]] [--escrow]]`
// What the billing store costs per request on its own, without HTTP: sequential admission + settlement
// pairs for one account and key, each awaited before the next, so every group-commit batch holds one
// operation (as at 1,000 req/s in the gateway). Prints wall time and this process's CPU (user, system)
// per pair (on PostgreSQL also the server's processes' CPU, from /proc). `--concurrency N` keeps N pairs in flight instead (batches of up to N operations, as under
// wrk's 50 connections). `--rate R` starts R pairs a second whatever the earlier ones do (an open loop,
// as the gateway's latency runs at 1,000 req/s) and prints the admission's, the settlement's and the
// pair's p50 and p99 and the operations per group-commit batch. SQLite by default (a fresh file with background checkpoints, as `gateway serve` opens it);
// with --database, a fresh PostgreSQL database created and dropped here. `--limits`: the key and the
// account get rpm, tpm and concurrency limits too high to refuse (as the bench's "limits enabled").
// `--stores N` (PostgreSQL, with --concurrency): N stores, each its own pool and group-commit batcher as
// N gateway workers have, the pairs in flight split evenly between them; on the one account, or with
// `--account-each` on an account (and key) of each store's own. `--escrow` (PostgreSQL): each store admits
// from its slice of the account's balance (ADR 0048), as GATEWAY_BALANCE_ESCROW=1 does.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StoreBilling } from "../src/billing/billing-store.js";
import { applicableLimits, limitSubjectsOf, subjectLimitsFromInput, tierLimitsOf } from "../src/core/traffic-limits.js";
import { openStore, type Store } from "../src/store/index.js";
import { createBenchDatabase, dropBenchDatabase } from "./lib/servers.js";
import { pairModel, runPairs, runPairsAtRate, type PairSubject } from "./lib/billing-pairs.js";
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
const storeCount = Number(valueOf("--stores", "1"));
const accountEach = args.includes("--account-each");
const escrow = args.includes("--escrow");
if (!(Number.isInteger(storeCount) && storeCount >= 1) || (storeCount > 1 && (!adminUrl || rate > 0 || concurrency % storeCount !== 0 || pairs % storeCount !== 0))) {
  // Several SQLite connections in one process would wait for each other's write lock synchronously.
  throw new Error("--stores N: PostgreSQL (--database), and --concurrency and --pairs multiples of N");
}
const NEVER_REFUSING = subjectLimitsFromInput({ requests_per_minute: 10_000_000, tokens_per_minute: 1_000_000_000_000, concurrent_requests: 1_000_000 });
const WARM_UP_PAIRS = 2000;

const dir = mkdtempSync(join(tmpdir(), "gw-billing-pair-"));
const model = pairModel(dir);
const pgDatabase = adminUrl ? await createBenchDatabase(adminUrl, "gw_billing_pair") : null;
const databaseUrl = pgDatabase?.url ?? null;
// One after another: each open runs the migrations.
const stores: Store[] = [];
for (let i = 0; i < storeCount; i++) {
  stores.push(
    await openStore({
      databaseUrl,
      sqlitePath: join(dir, "gw.db"),
      secret: "bench-secret-0123456789abcdefghijklmnop",
      backgroundCheckpoints: { onError: (message) => console.error(`checkpoint failed: ${message}`) },
    }),
  );
}
const [store] = stores as [Store];
try {
  let batches = 0;
  const newSubject = async (billing: StoreBilling, n: number): Promise<PairSubject> => {
    const account = await store.accounts.create({ email: `pair${n}@example.com`, tier: "standard", balance: 1_000_000_000_000_000n });
    const { key } = await store.keys.create({ accountId: account.id });
    const limits = withLimits
      ? applicableLimits(
          tierLimitsOf(undefined),
          limitSubjectsOf({ key: { id: key.id, limits: NEVER_REFUSING }, account: { id: account.id, limits: NEVER_REFUSING } }),
          "pair-model",
        )
      : undefined;
    return { billing, accountId: account.id, keyId: key.id, model, limits };
  };
  const billings = stores.map((s) => new StoreBilling(s.handle, { onBatch: () => (batches += 1), escrow: escrow ? {} : undefined }));
  const subject = await newSubject(billings[0]!, 0);
  const subjects = await Promise.all(billings.map(async (billing, i) => (i === 0 ? subject : accountEach ? newSubject(billing, i) : { ...subject, billing })));
  const runSplit = (count: number, onPair?: (done: number) => void) =>
    Promise.all(subjects.map((s) => runPairs(s, count / storeCount, concurrency / storeCount, onPair))).then(() => undefined);
  const progress = (done: number) => {
    if (done % 5000 === 0) process.stderr.write(`  ${done}/${pairs} pairs\n`);
  };
  if (rate > 0) await runPairsAtRate(subject, WARM_UP_PAIRS, rate);
  else await runSplit(WARM_UP_PAIRS);
  const cpuBefore = process.cpuUsage();
  const serverCpuBefore = databaseUrl ? postgresCpuMicros() : null;
  batches = 0;
  const started = process.hrtime.bigint();
  const times = rate > 0 ? await runPairsAtRate(subject, pairs, rate) : await runSplit(pairs, progress);
  const wallUs = Number(process.hrtime.bigint() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const serverCpuAfter = serverCpuBefore === null ? null : postgresCpuMicros();
  const serverCpu = serverCpuBefore === null || serverCpuAfter === null ? "" : `, PostgreSQL server CPU ${((serverCpuAfter - serverCpuBefore) / pairs).toFixed(1)} µs/pair`;
  const database = databaseUrl ? "PostgreSQL" : "SQLite";
  const split = `${storeCount > 1 ? ` over ${storeCount} stores${accountEach ? ", an account each" : ", one account"}` : ""}${escrow ? ", escrow" : ""}`;
  const load = rate > 0 ? `${rate} a second` : `${concurrency} in flight${split}`;
  console.log(
    `${database}, ${pairs} admission+settlement pairs, ${load}${withLimits ? ", limits on key and account" : ""}: wall ${(wallUs / pairs).toFixed(1)} µs/pair, CPU user ${(cpu.user / pairs).toFixed(1)} + system ${(cpu.system / pairs).toFixed(1)} µs/pair${serverCpu}`,
  );
  if (!times) console.log(`  ${((2 * pairs) / batches).toFixed(2)} operations (${(pairs / batches).toFixed(2)} pairs) a batch`);
  if (times) {
    const ms = (values: number[]) => {
      const { p50, p99 } = summarize(values);
      return `p50 ${(p50 / 1000).toFixed(2)} / p99 ${(p99 / 1000).toFixed(2)} ms`;
    };
    console.log(`  admission ${ms(times.admit)}, settlement ${ms(times.settle)}, pair ${ms(times.pair)}; ${((2 * pairs) / batches).toFixed(2)} operations a batch`);
  }
  for (const billing of billings) await billing.close();
} finally {
  for (const s of stores) await s.close();
  if (pgDatabase) await dropBenchDatabase(adminUrl, pgDatabase.name);
  rmSync(dir, { recursive: true, force: true });
}
