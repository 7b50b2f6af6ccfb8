// `node --import tsx bench/sqlite-writer-workers.ts [--pairs 4000] [--concurrency 24] [--workers 1,2,4] [--reps 3]`
// The billing of N cluster workers on one SQLite file, without HTTP (ADR 0047): admission + settlement
// pairs, `--concurrency` in flight in all (split over the workers), under three designs, alternating
// in one run:
//   own:     every worker commits its own pairs with its own SqliteWriter (contending for the lock);
//   primary: every worker sends them to the cluster primary (RemoteSqliteBillingWrites over the IPC
//            channel: one message per worker turn, one answer message per owner turn), which commits
//            them all with one SqliteWriter;
//   per-op:  the same with one message per operation and per answer (the first version, kept in
//            bench/lib/per-operation-remote.ts for this comparison).
// Prints, per design and worker count, the CPU of every process (workers and primary) per pair, the
// wall time per pair, the write-lock retries and the IPC messages; then the ratios per repetition.
import cluster from "node:cluster";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StoreBilling } from "../src/billing/billing-store.js";
import { RemoteSqliteBillingWrites } from "../src/billing/sqlite-billing-remote.js";
import { answerBillingWrite, BillingWriteAnswerer, LocalSqliteBillingWrites, type BillingAnswerBatch, type BillingWriteBatch } from "../src/billing/sqlite-billing-writes.js";
import { openStore } from "../src/store/index.js";
import { sqliteBusyRetries } from "../src/store/sqlite-writer.js";
import { pairModel, runPairs } from "./lib/billing-pairs.js";
import { PerOperationRemoteWrites, type BillingWriteAnswer, type BillingWriteRequest } from "./lib/per-operation-remote.js";

const SECRET = "bench-secret-0123456789abcdefghijklmnop";
/** Pairs each worker runs before it measures (their messages count in the per-pair figure). */
const WARM_UP_PAIRS = 200;
const DESIGNS = ["own", "per-op", "primary"] as const;
type Design = (typeof DESIGNS)[number];
type Job = { type: "job"; design: Design; pairs: number; concurrency: number; accountId: string; keyId: string };
type Done = { type: "done"; cpuMicros: number; busyRetries: number };

if (cluster.isWorker) await worker();
else await primary();

async function worker(): Promise<void> {
  const dir = process.env.BENCH_DIR!;
  const model = pairModel(dir);
  const store = await openStore({ databaseUrl: null, sqlitePath: join(dir, "gw.db"), secret: SECRET, migrate: false });
  let remote: RemoteSqliteBillingWrites | PerOperationRemoteWrites | undefined;
  const send = (message: BillingWriteBatch | BillingWriteRequest, failed: () => void) => process.send!(message, undefined, {}, (error: Error | null) => error && failed());
  process.on("message", (message: Job | BillingAnswerBatch | BillingWriteAnswer) => {
    if (message.type === "billing-answers") return remote instanceof RemoteSqliteBillingWrites && remote.onAnswers(message);
    if (message.type === "billing-answer") return remote instanceof PerOperationRemoteWrites && remote.onAnswer(message);
    void (async () => {
      remote = message.design === "primary" ? new RemoteSqliteBillingWrites(send) : message.design === "per-op" ? new PerOperationRemoteWrites(send) : undefined;
      const billing = new StoreBilling(store.handle, remote === undefined ? {} : { sqliteWrites: remote });
      const subject = { billing, accountId: message.accountId, keyId: message.keyId, model };
      await runPairs(subject, WARM_UP_PAIRS, message.concurrency);
      const busyBefore = sqliteBusyRetries();
      const before = process.cpuUsage();
      await runPairs(subject, message.pairs, message.concurrency);
      const cpu = process.cpuUsage(before);
      process.send!({ type: "done", cpuMicros: cpu.user + cpu.system, busyRetries: sqliteBusyRetries() - busyBefore } satisfies Done);
    })();
  });
  // Ended by the primary: exit normally, so that `node --cpu-prof` writes each worker's profile.
  process.once("SIGTERM", () => process.exit(0));
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
        for (const design of rep % 2 === 1 ? DESIGNS : [...DESIGNS].reverse()) {
          const account = await store.accounts.create({ email: `w${rep}-${count}-${design}@example.com`, tier: "standard", balance: 1_000_000_000_000_000n });
          const { key } = await store.keys.create({ accountId: account.id });
          const workers = Array.from({ length: count }, () => cluster.fork());
          await Promise.all(workers.map((w) => new Promise<void>((resolve) => w.once("message", () => resolve()))));
          let messages = 0;
          for (const w of workers) {
            const answerer = new BillingWriteAnswerer(writes, (answers) => {
              messages += 1;
              if (w.isConnected()) w.send(answers);
            });
            w.on("message", (message: BillingWriteBatch | BillingWriteRequest) => {
              if (message.type === "billing-writes") {
                messages += 1;
                answerer.onRequests(message);
              } else if (message.type === "billing-write") {
                messages += 2;
                void answerBillingWrite(writes, message).then((answer) => w.isConnected() && w.send({ type: "billing-answer", ...answer }));
              }
            });
          }
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
            `rep ${rep}, ${count} worker(s), writer ${design.padEnd(7)}: CPU ${perPair.toFixed(1)} µs/pair (all processes; the primary's ${((own.user + own.system) / pairs).toFixed(1)}), wall ${(wallUs / pairs).toFixed(1)} µs/pair, lock retries ${busy}, IPC messages/pair ${(messages / (pairs + WARM_UP_PAIRS * count)).toFixed(2)}`,
          );
        }
      }
    }
    const ratios = (a: number[], b: number[]) => a.map((v, i) => (v / b[i]!).toFixed(2)).join(", ");
    for (const count of workerCounts) {
      const [own, perOp, shared] = DESIGNS.map((design) => results.get(`${count}-${design}`)!);
      const figures = DESIGNS.map(
        (design) =>
          `${design} ${results
            .get(`${count}-${design}`)!
            .map((v) => v.toFixed(0))
            .join(", ")}`,
      ).join("; ");
      console.log(
        `${count} worker(s): CPU/pair ${figures}; per rep: primary/own ${ratios(shared!, own!)}; per-op/own ${ratios(perOp!, own!)}; primary/per-op ${ratios(shared!, perOp!)}`,
      );
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
