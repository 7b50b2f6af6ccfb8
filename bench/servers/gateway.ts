// Our gateway in its own process for the bench: the same createApp as `gateway serve`, a config
// pointing at the mock upstream, a fresh database (SQLite in a temp dir, or the PostgreSQL database
// named by DATABASE_URL), one account with a large balance and one key. Authentication, admission,
// holds and ledger settlement are all on, unless BENCH_BILLING=off: then, and only here in the bench
// harness, ctx.pipeline.billing is replaced by a no-op Billing for comparison.
//
// Bench-only IPC (no HTTP route): {type:"stats"} answers this process's process.cpuUsage(), RSS and
// the peak RSS sampled every 50 ms since the last {type:"reset-peak"}.
import { rmSync, writeFileSync } from "node:fs";
import SqliteDatabase from "better-sqlite3";
import { Session } from "node:inspector";
import { constants as perfConstants, monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { createApp } from "../../src/app.js";
import { tuneHeapForServing } from "../../src/cli/heap.js";
import type { Billing, Charge, Hold } from "../../src/billing/types.js";
import { loadConfig } from "../../src/config/load.js";
import { parseUsd } from "../../src/core/money.js";
import { closeUpstreamAgent } from "../../src/upstreams/upstream-client.js";
import { writeBenchConfig } from "./bench-config.js";

const mockUrl = process.env.BENCH_MOCK_URL;
if (!mockUrl) throw new Error("BENCH_MOCK_URL is required");
const billingOn = process.env.BENCH_BILLING !== "off";
// BENCH_LIMITS=on: the "limits enabled" scenario, rate and concurrency limits on the key and the
// account far above what the bench sends, so that each request is judged and counted but never refused.
const limitsOn = process.env.BENCH_LIMITS === "on";
const NEVER_REFUSING_LIMITS = { requests_per_minute: 10_000_000, tokens_per_minute: 1_000_000_000_000, concurrent_requests: 1_000_000 };
// BENCH_METRICS=on: GET /metrics configured, so every request is recorded (tracing stays off: no OTEL_*).
const metricsOn = process.env.BENCH_METRICS === "on";
// BENCH_REQUEST_LOG=off: the request log turned off (it is on by default, as in production).
const requestLogOff = process.env.BENCH_REQUEST_LOG === "off";

const { dir, env } = writeBenchConfig({ mockUrl, metricsOn, requestLogOff });
// Bench-only experiment (BENCH_EXPERIMENT=stmt-cache), never a production path: memoize
// better-sqlite3 prepared statements by SQL text, to measure what a statement cache in the store
// would save (Kysely's SQLite driver prepares every statement again on every query).
if (process.env.BENCH_EXPERIMENT === "stmt-cache") {
  const proto = SqliteDatabase.prototype as unknown as { prepare(sql: string): unknown };
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with the database as this
  const prepare = proto.prepare;
  const caches = new WeakMap<object, Map<string, unknown>>();
  proto.prepare = function cachedPrepare(this: object, sql: string) {
    let cache = caches.get(this);
    if (!cache) caches.set(this, (cache = new Map<string, unknown>()));
    let stmt = cache.get(sql);
    if (!stmt) cache.set(sql, (stmt = prepare.call(this, sql)));
    return stmt;
  };
}

// As `gateway serve` does (the command-line half, SERVER_NODE_FLAGS, comes from the bench's execArgv).
tuneHeapForServing(setFlagsFromString);
const config = loadConfig(env, dir);
const app = await createApp(config);

/** Billing off: admits everything, charges nothing, writes nothing. */
class NoopBilling implements Billing {
  #n = 0;
  async admit(request: Parameters<Billing["admit"]>[0]): Promise<Hold> {
    this.#n += 1;
    return {
      id: `hold_noop_${this.#n}`,
      requestId: request.requestId,
      accountId: request.accountId,
      keyId: request.keyId,
      amount: 0n,
      tokens: 0,
      model: request.model,
      route: request.route,
    };
  }
  async settle(): Promise<Charge> {
    return { cost: 0n, recorded: true };
  }
  async release(): Promise<void> {}
}
if (!billingOn) app.ctx.pipeline.billing = new NoopBilling();

const account = await app.ctx.store.accounts.create({ email: `bench-${process.pid}@example.com`, tier: "standard", balance: parseUsd("900000")! });
if (limitsOn) await app.ctx.store.accounts.update(account.id, { limits: NEVER_REFUSING_LIMITS });
const { raw: apiKey } = await app.ctx.store.keys.create({ accountId: account.id, ...(limitsOn && { limits: NEVER_REFUSING_LIMITS }) });
const address = await app.server.listen({ host: "127.0.0.1", port: 0 });
const port = Number(new URL(address).port);

let peakRss = process.memoryUsage.rss();
// Event-loop delay since the last reset-peak: how long ready work waited for the loop (GC pauses,
// synchronous work), as opposed to waiting for the CPU the other processes hold.
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
loopDelay.enable();
const sampler = setInterval(() => {
  const rss = process.memoryUsage.rss();
  if (rss > peakRss) peakRss = rss;
}, 50);
sampler.unref();

// GC pauses since the last reset-peak: scavenges (minor) and mark-compact (major) separately, since
// either can hold a request on the loop; what explains a p99 far above the event-loop delay's p50.
const emptyGc = () => ({ minor: { count: 0, totalMs: 0, maxMs: 0 }, major: { count: 0, totalMs: 0, maxMs: 0 } });
let gcPauses = emptyGc();
new PerformanceObserver((list) => {
  for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
    const bucket = entry.detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR ? gcPauses.minor : gcPauses.major;
    bucket.count += 1;
    bucket.totalMs += entry.duration;
    if (entry.duration > bucket.maxMs) bucket.maxMs = entry.duration;
  }
}).observe({ entryTypes: ["gc"] });

process.on("message", (message: unknown) => {
  const type = (message as { type?: string }).type;
  if (type === "stats") {
    const memory = process.memoryUsage();
    if (memory.rss > peakRss) peakRss = memory.rss;
    process.send?.({
      type: "stats",
      cpu: process.cpuUsage(),
      rss: memory.rss,
      peakRss,
      memory,
      loopDelayMs: { p50: loopDelay.percentile(50) / 1e6, p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 },
      gcPauses,
    });
  } else if (type === "request-log") {
    // What the request log wrote and dropped, after writing what it holds (null: the log is off).
    const log = app.ctx.pipeline.requestLog;
    const reply = () => process.send?.({ type: "request-log", counts: log === null ? null : { written: log.writtenTotal, dropped: log.droppedTotal, buffered: log.buffered } });
    if (log === null) reply();
    else void log.flush().then(reply);
  } else if (type === "reset-peak") {
    peakRss = process.memoryUsage.rss();
    loopDelay.reset();
    gcPauses = emptyGc();
    process.send?.({ type: "reset-peak", rss: peakRss });
  } else if (type === "gc") {
    (globalThis as { gc?: () => void }).gc?.();
    process.send?.({ type: "gc", rss: process.memoryUsage.rss() });
  }
});

// Bench-only allocation profile (BENCH_ALLOC_PROFILE=file): every allocation is sampled, also those
// already collected, so the file shows where the garbage comes from (bench/profile.ts --alloc).
const allocProfile = process.env.BENCH_ALLOC_PROFILE;
const inspector = allocProfile ? new Session() : null;
if (inspector) {
  inspector.connect();
  inspector.post("HeapProfiler.startSampling", { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
}
function writeAllocProfile(): Promise<void> {
  if (!inspector || !allocProfile) return Promise.resolve();
  return new Promise((resolve) =>
    inspector.post("HeapProfiler.stopSampling", (error, result) => {
      if (!error) writeFileSync(allocProfile, JSON.stringify(result.profile));
      resolve();
    }),
  );
}

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  const force = setTimeout(() => process.exit(0), 5_000);
  force.unref();
  try {
    await writeAllocProfile();
    app.server.server.closeAllConnections();
    await app.close();
    await closeUpstreamAgent();
  } finally {
    rmSync(dir, { recursive: true, force: true });
    app.ctx.logger.flush();
    // process.exit() (not a signal) so that --cpu-prof writes its profile.
    process.exit(0);
  }
}
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());
process.on("disconnect", () => void stop());

process.send?.({ type: "ready", port, apiKey, billing: billingOn, database: app.ctx.store.dialect });
