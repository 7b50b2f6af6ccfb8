// Our gateway as `gateway serve --workers N` for the bench (BENCH_WORKERS, default 2): the real
// cluster primary (src/cli/workers.ts) and workers (serveWorker), on the config of servers/gateway.ts
// (billing on; SQLite in a temp dir, or the PostgreSQL database named by DATABASE_URL). The primary
// creates the bench account and key before forking; the workers share the port through cluster.
//
// The same bench IPC as servers/gateway.ts, answered by the primary for the whole server:
// {type:"stats"}: CPU summed over the workers and the primary; rss and peakRss the largest worker's
// (each worker samples its own RSS every 50 ms; the target is per worker), totalRss, and every
// worker's figures in `workers`; plus `sqliteBusyRetries`, the write batches (the workers' and, when
// it owns the billing writes, the primary's) that found another process holding SQLite's write lock.
import cluster from "node:cluster";
import { rmSync } from "node:fs";
import { resolveServerSecret } from "../../src/config/server-secret.js";
import { loadConfig } from "../../src/config/load.js";
import { parseUsd } from "../../src/core/money.js";
import { sqliteBusyRetries } from "../../src/store/sqlite-writer.js";
import type { CliIo } from "../../src/cli/io.js";
import { serve } from "../../src/cli/serve.js";
import { openStore } from "../../src/store/index.js";
import { writeBenchConfig } from "./bench-config.js";

const workerCount = Number(process.env.BENCH_WORKERS ?? "2");
const quiet = (): void => undefined;

interface WorkerStats {
  type: "bench-worker-stats";
  pid: number;
  cpu: NodeJS.CpuUsage;
  rss: number;
  peakRss: number;
  memory: NodeJS.MemoryUsage;
  sqliteBusyRetries: number;
}

if (cluster.isWorker) await runWorker();
else await runPrimary();

async function runWorker(): Promise<void> {
  const dir = process.env.BENCH_CLUSTER_DIR!;
  let peakRss = process.memoryUsage.rss();
  setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 50).unref();
  process.on("message", (message: { type?: string }) => {
    const memory = process.memoryUsage();
    peakRss = Math.max(peakRss, memory.rss);
    if (message.type === "bench-stats") {
      process.send?.({
        type: "bench-worker-stats",
        pid: process.pid,
        cpu: process.cpuUsage(),
        rss: memory.rss,
        peakRss,
        memory,
        sqliteBusyRetries: sqliteBusyRetries(),
      } satisfies WorkerStats);
    } else if (message.type === "bench-reset-peak") {
      peakRss = memory.rss;
      process.send?.({ type: "bench-worker-reset" });
    } else if (message.type === "bench-gc") {
      (globalThis as { gc?: () => void }).gc?.();
      process.send?.({ type: "bench-worker-gc" });
    }
  });
  const io: CliIo = { stdout: quiet, stderr: (text) => process.stderr.write(text), env: process.env, cwd: dir };
  await serve(loadConfig(process.env, dir), io, workerCount);
  // Drained: leave the cluster (as src/cli/main.ts does), which lets the process end.
  if (cluster.worker?.isConnected()) cluster.worker.disconnect();
}

async function runPrimary(): Promise<void> {
  const mockUrl = process.env.BENCH_MOCK_URL;
  if (!mockUrl) throw new Error("BENCH_MOCK_URL is required");
  const { dir, env } = writeBenchConfig({ mockUrl, metricsOn: process.env.BENCH_METRICS === "on", requestLogOff: process.env.BENCH_REQUEST_LOG === "off" });
  // The workers run this script again with this environment.
  Object.assign(process.env, env, { BENCH_CLUSTER_DIR: dir });
  const config = loadConfig(process.env, dir);
  // Migrates the fresh database before the workers exist (superviseWorkers opens it again: nothing to do then).
  const store = await openStore({ databaseUrl: config.databaseUrl, sqlitePath: config.sqlitePath, secret: resolveServerSecret(config) });
  const account = await store.accounts.create({ email: `bench-${process.pid}@example.com`, tier: "standard", balance: parseUsd("900000")! });
  const { raw: apiKey } = await store.keys.create({ accountId: account.id });
  const database = store.dialect;
  await store.close();

  let listening = 0;
  cluster.on("listening", (_worker, address) => {
    if (++listening === workerCount) process.send?.({ type: "ready", port: address.port, apiKey, billing: true, database, workers: workerCount });
  });

  /** Sends a bench message to every worker and collects one answer of `answer` type from each. */
  const askWorkers = <T>(type: string, answer: string): Promise<T[]> => {
    const workers = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined && w.isConnected());
    return new Promise((resolve) => {
      const answers: T[] = [];
      const timer = setTimeout(finish, 5_000);
      function onMessage(worker: unknown, message: { type?: string }) {
        if (message?.type !== answer) return;
        answers.push(message as T);
        if (answers.length === workers.length) finish();
      }
      function finish() {
        clearTimeout(timer);
        cluster.off("message", onMessage);
        resolve(answers);
      }
      cluster.on("message", onMessage);
      for (const worker of workers) worker!.send({ type });
    });
  };

  process.on("message", (message: { type?: string }) => {
    if (message.type === "stats") {
      void askWorkers<WorkerStats>("bench-stats", "bench-worker-stats").then((workers) => {
        const own = process.cpuUsage();
        const cpu = workers.reduce((sum, w) => ({ user: sum.user + w.cpu.user, system: sum.system + w.cpu.system }), { user: own.user, system: own.system });
        process.send?.({
          type: "stats",
          cpu,
          // Per worker, as the target is: the largest worker's (the total is in totalRss).
          rss: Math.max(...workers.map((w) => w.rss)),
          peakRss: Math.max(...workers.map((w) => w.peakRss)),
          totalRss: workers.reduce((sum, w) => sum + w.rss, process.memoryUsage.rss()),
          memory: workers[0]?.memory,
          workers: workers.map((w) => ({ pid: w.pid, rss: w.rss, peakRss: w.peakRss, cpu: w.cpu })),
          primaryRss: process.memoryUsage.rss(),
          sqliteBusyRetries: workers.reduce((sum, w) => sum + w.sqliteBusyRetries, sqliteBusyRetries()),
        });
      });
    } else if (message.type === "reset-peak") {
      void askWorkers("bench-reset-peak", "bench-worker-reset").then(() => process.send?.({ type: "reset-peak" }));
    } else if (message.type === "gc") {
      void askWorkers("bench-gc", "bench-worker-gc").then(() => process.send?.({ type: "gc" }));
    } else if (message.type === "request-log") {
      // Each worker's request log is its own; not collected here (the one-process target reports it).
      process.send?.({ type: "request-log", counts: null });
    }
  });
  // The bench went away: drain and stop like a SIGTERM.
  process.on("disconnect", () => process.kill(process.pid, "SIGTERM"));

  const io: CliIo = { stdout: quiet, stderr: (text) => process.stderr.write(text), env: process.env, cwd: dir };
  try {
    await serve(config, io, workerCount);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}
