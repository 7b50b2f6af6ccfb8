// `node --import tsx bench/sqlite-writer-workers.ts [--pairs 4000] [--concurrency 24] [--workers 1,2,4] [--reps 3]`
// The billing of N cluster workers on one SQLite file, without HTTP (ADR 0047): admission + settlement
// pairs, `--concurrency` in flight in all (split over the workers), under two designs, alternating
// in one run:
//   own:     every worker commits its own pairs with its own SqliteWriter (contending for the lock);
//   primary: every worker sends them to the cluster primary (RemoteSqliteBillingWrites over the IPC
//            channel), which commits them all with one SqliteWriter.
// Prints, per design and worker count, the CPU of every process (workers and primary) per pair, the
// wall time per pair and the write-lock retries; then the ratios primary / own per repetition.
import cluster from "node:cluster";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StoreBilling } from "../src/billing/billing-store.js";
import { RemoteSqliteBillingWrites } from "../src/billing/sqlite-billing-remote.js";
import { answerBillingWrite, LocalSqliteBillingWrites, type BillingWriteAnswer, type BillingWriteRequest } from "../src/billing/sqlite-billing-writes.js";
import { openStore } from "../src/store/index.js";
import { sqliteBusyRetries } from "../src/store/sqlite-writer.js";
import { pairModel, runPairs } from "./lib/billing-pairs.js";

const SECRET = "bench-secret-0123456789abcdefghijklmnop";
type Design = "own" | "primary";
type Job = { type: "job"; design: Design; pairs: number; concurrency: number; accountId: string; keyId: string };
type Done = { type: "done"; cpuMicros: number; busyRetries: number };

if (cluster.isWorker) await worker();
else await primary();

async function worker(): Promise<void> {
  const dir = process.env.BENCH_DIR!;
  const model = pairModel(dir);
  const store = await openStore({ databaseUrl: null, sqlitePath: join(dir, "gw.db"), secret: SECRET, migrate: false });
  let remote: RemoteSqliteBillingWrites | undefined;
  process.on("message", (message: Job | BillingWriteAnswer) => {
    if (message.type === "billing-answer") return remote?.onAnswer(message);
    void (async () => {
      remote =
        message.design === "primary"
          ? new RemoteSqliteBillingWrites((request, failed) => process.send!(request, undefined, {}, (error: Error | null) => error && failed()))
          : undefined;
      const billing = new StoreBilling(store.handle, remote === undefined ? {} : { sqliteWrites: remote });
      const subject = { billing, accountId: message.accountId, keyId: message.keyId, model };
      await runPairs(subject, 200, message.concurrency); // warm-up
      const busyBefore = sqliteBusyRetries();
      const before = process.cpuUsage();
      await runPairs(subject, message.pairs, message.concurrency);
      const cpu = process.cpuUsage(before);
      process.send!({ type: "done", cpuMicros: cpu.user + cpu.system, busyRetries: sqliteBusyRetries() - busyBefore } satisfies Done);
    })();
  });
  process.send!({ type: "ready" });
}

async function primary(): Promise<void> {
  const args = process.argv.slice(2);
  const valueOf = (flag: string, fallback: string) => (args.includes(flag) ? args[args.indexOf(flag) + 1]! : fallback);
  const pairs = Number(valueOf("--pairs", "4000"));
  const concurrency = Number(valueOf("--concurrency", "24"));
  const workerCounts = valueOf("--workers", "1,2,4").split(",").map(Number);
  const reps = Number(valueOf("--reps", "3"));
  const dir = mkdtempSync(join(tmpdir(), "gw-writer-bench-"));
  process.env.BENCH_DIR = dir;
  pairModel(dir);
  const store = await openStore({
    databaseUrl: null,
    sqlitePath: join(dir, "gw.db"),
    secret: SECRET,
    backgroundCheckpoints: { onError: (message) => console.error(`checkpoint failed: ${message}`) },
  });
  const writes = new LocalSqliteBillingWrites(store.handle);
  cluster.setupPrimary({ serialization: "advanced" });
  const results = new Map<string, number[]>();
  try {
    for (let rep = 1; rep <= reps; rep++) {
      for (const count of workerCounts) {
        for (const design of rep % 2 === 1 ? (["own", "primary"] as const) : (["primary", "own"] as const)) {
          const account = await store.accounts.create({ email: `w${rep}-${count}-${design}@example.com`, tier: "standard", balance: 1_000_000_000_000_000n });
          const { key } = await store.keys.create({ accountId: account.id });
          const workers = Array.from({ length: count }, () => cluster.fork());
          await Promise.all(workers.map((w) => new Promise<void>((resolve) => w.once("message", () => resolve()))));
          const onMessage = (w: (typeof workers)[number], message: BillingWriteRequest) => {
            if (message.type === "billing-write") void answerBillingWrite(writes, message).then((answer) => w.isConnected() && w.send(answer));
          };
          for (const w of workers) w.on("message", (message: BillingWriteRequest) => onMessage(w, message));
          const busyBefore = sqliteBusyRetries();
          const ownBefore = process.cpuUsage();
          const started = process.hrtime.bigint();
          const done = Promise.all(
            workers.map(
              (w) =>
                new Promise<Done>((resolve) =>
                  w.on("message", (message: { type?: string }) => {
                    if (message.type === "done") resolve(message as Done);
                  }),
                ),
            ),
          );
          for (const w of workers)
            w.send({ type: "job", design, pairs: pairs / count, concurrency: Math.max(1, concurrency / count), accountId: account.id, keyId: key.id } satisfies Job);
          const answers = await done;
          const wallUs = Number(process.hrtime.bigint() - started) / 1000;
          const own = process.cpuUsage(ownBefore);
          const cpu = answers.reduce((sum, a) => sum + a.cpuMicros, own.user + own.system);
          const busy = answers.reduce((sum, a) => sum + a.busyRetries, sqliteBusyRetries() - busyBefore);
          for (const w of workers) w.kill();
          const perPair = cpu / pairs;
          results.set(`${count}-${design}`, [...(results.get(`${count}-${design}`) ?? []), perPair]);
          console.log(
            `rep ${rep}, ${count} worker(s), writer ${design.padEnd(7)}: CPU ${perPair.toFixed(1)} µs/pair (all processes), wall ${(wallUs / pairs).toFixed(1)} µs/pair, lock retries ${busy}`,
          );
        }
      }
    }
    for (const count of workerCounts) {
      const own = results.get(`${count}-own`)!;
      const shared = results.get(`${count}-primary`)!;
      console.log(
        `${count} worker(s): CPU/pair own ${own.map((v) => v.toFixed(0)).join(", ")}; primary ${shared.map((v) => v.toFixed(0)).join(", ")}; primary/own per rep ${shared.map((v, i) => (v / own[i]!).toFixed(2)).join(", ")}`,
      );
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
