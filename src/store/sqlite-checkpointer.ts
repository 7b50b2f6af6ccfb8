// WAL checkpoints for the SQLite database, in a worker thread instead of on the request path.
//
// Why: with SQLite's default (wal_autocheckpoint = 1000 pages) the commit that crosses the limit
// copies the WAL into the database file and fsyncs both, synchronously, on the event loop: measured
// here as settlement p99 2.4–3.1 ms against ~0.24 ms without it, and every request queued behind it
// waits as long. So the server's connection turns automatic checkpoints off, and this worker, with a
// connection of its own, runs a PASSIVE checkpoint every INTERVAL_MS (it never blocks the writer; the
// WAL is copied and fsynced while requests go on). When the WAL still grows past RESTART_FRAMES
// (PASSIVE never caught up under continuous writes, so the WAL could not start over), it runs one
// RESTART checkpoint, which makes writers wait for it once so that the WAL is reused from the start.
// Durability is unchanged: a commit is durable as before (synchronous = NORMAL in WAL mode); only who
// copies the WAL into the database file, and when, changes. When the server closes, the last
// connection's close checkpoints what is left, as SQLite always does.
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

const INTERVAL_MS = 200;
const RESTART_FRAMES = 10_000; // ~40 MiB of 4 KiB pages

// CommonJS, evaluated in the worker: it needs nothing but better-sqlite3 (no TypeScript loader).
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma("busy_timeout = 0");
let timer;
function checkpoint() {
  try {
    const [state] = db.pragma("wal_checkpoint(PASSIVE)");
    if (state && Number(state.log) > workerData.restartFrames) {
      db.pragma("busy_timeout = 1000");
      try { db.pragma("wal_checkpoint(RESTART)"); } finally { db.pragma("busy_timeout = 0"); }
    }
    parentPort.postMessage({ type: "checkpoint", log: Number(state ? state.log : 0), checkpointed: Number(state ? state.checkpointed : 0) });
  } catch (error) {
    parentPort.postMessage({ type: "error", message: String(error && error.message || error) });
  }
  timer = setTimeout(checkpoint, workerData.intervalMs);
}
parentPort.on("message", (message) => {
  if (message !== "stop") return;
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
timer = setTimeout(checkpoint, workerData.intervalMs);
`;

export interface CheckpointReport {
  type: "checkpoint" | "error";
  log?: number;
  checkpointed?: number;
  message?: string;
}

export interface SqliteCheckpointer {
  /** Stops the worker and closes its connection. */
  stop(): Promise<void>;
}

export function startSqliteCheckpointer(
  path: string,
  options: { intervalMs?: number; restartFrames?: number; onReport?: (report: CheckpointReport) => void } = {},
): SqliteCheckpointer {
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver, path, intervalMs: options.intervalMs ?? INTERVAL_MS, restartFrames: options.restartFrames ?? RESTART_FRAMES },
    // No loaders or flags of the parent (e.g. tsx in development), and a small heap: the worker only
    // calls into SQLite.
    execArgv: [],
    resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 },
    stdout: false,
    stderr: false,
  });
  worker.unref();
  const onReport = options.onReport;
  if (onReport) worker.on("message", (message: CheckpointReport) => onReport(message));
  // A worker that dies (it should not) must not take the server down: SQLite then simply keeps a
  // longer WAL until the last connection closes.
  worker.on("error", (error) => onReport?.({ type: "error", message: error.message }));
  let exited = false;
  worker.once("exit", () => (exited = true));
  let stopped: Promise<void> | undefined;
  return {
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        if (exited) return resolve();
        const timer = setTimeout(() => void worker.terminate().then(() => resolve()), 2_000);
        worker.once("exit", () => {
          clearTimeout(timer);
          resolve();
        });
        worker.postMessage("stop");
      });
      return stopped;
    },
  };
}
