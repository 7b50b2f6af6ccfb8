// The bench orchestrator: starts the mock upstream, our gateway (SQLite and PostgreSQL, billing on
// and off), the peer gateway and the load generators as separate processes on 127.0.0.1, runs the
// phases interleaved (A B A B ...), and returns every measurement. The caller writes the report.
import { cpus, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { dirname, join, resolve } from "node:path";
import { request } from "undici";
import type { OpenLoopJob, OpenLoopResult } from "../load/open-loop.js";
import { ensureWrk, runWrk, writeWrkScript, type WrkResult } from "../load/wrk.js";
import { requestBody } from "./constants.js";
import { killAll, sleep, stopChild, waitForMessage, type Child } from "./procs.js";
import {
  ask,
  buildGateway,
  createBenchDatabase,
  dropBenchDatabase,
  FLOOR_SCRIPT,
  forkChild,
  GATEWAY_CLUSTER_SCRIPT,
  isType,
  LOADGEN_SCRIPT,
  MOCK_SCRIPT,
  PORTKEY_PRELOAD,
  postgresReachable,
  startOurGateway,
} from "./servers.js";
import { median, slope } from "./stats.js";
import { PAIRED_COMPARISONS, pairedSchedule, type PairedRun } from "./paired.js";
import { postgresCpuMicros } from "./postgres-cpu.js";
import { ALL_TARGETS, CLUSTER_TARGETS, POSTGRES_TARGETS, type TargetName } from "./targets.js";

const here = dirname(fileURLToPath(import.meta.url));
const benchDir = resolve(here, "..");
const repoDir = resolve(benchDir, "..");

export type Mode = "buffered" | "stream";
export { ALL_TARGETS, CLUSTER_TARGETS, TARGET_LABELS, type TargetName } from "./targets.js";

/** BENCH_TARGETS=a,b,c: only these targets (plus direct, which every comparison needs). */
function selectTargets(names: TargetName[]): TargetName[] {
  const wanted = process.env.BENCH_TARGETS?.split(",")
    .map((n) => n.trim())
    .filter(Boolean);
  if (!wanted || wanted.length === 0) return names;
  const unknown = wanted.filter((n) => !names.includes(n as TargetName));
  if (unknown.length > 0) throw new Error(`BENCH_TARGETS: unknown or unavailable target(s) ${unknown.join(", ")}; available: ${names.join(", ")}`);
  return names.filter((n) => n === "direct" || wanted.includes(n));
}

export interface BenchOptions {
  /** ~1 minute smoke run: one repetition, short runs, no leak check. */
  quick?: boolean;
  /** ~1 second of load, SQLite gateway and direct only (the unit-test smoke). */
  smoke?: boolean;
  /** false: skip PostgreSQL; undefined: use it when 127.0.0.1:5432 answers. */
  postgres?: boolean;
  /** false: skip the peer gateway. Default: on (off for smoke). */
  peer?: boolean;
  /** Length of the full run's leak check (default 60 s; e.g. 600 for a 10-minute check). */
  leakSeconds?: number;
  /** Write a --cpu-prof profile of the SQLite billing-on gateway into this directory. */
  profileDir?: string;
  /** Install wrk with apt-get when missing (default true, false for smoke). */
  installWrk?: boolean;
  postgresAdminUrl?: string;
  /** Only the paired A/B phase (after the warm-up): no latency, throughput or leak phase. */
  pairedOnly?: boolean;
  /** Override the plan's paired slices per comparison (an even number, at least 2) and seconds per slice. */
  pairedSlices?: number;
  pairedSeconds?: number;
  log?: (line: string) => void;
}

export interface Plan {
  kind: "full" | "quick" | "smoke";
  reps: number;
  rates: number[];
  latencyMs: number;
  latencyWarmupMs: number;
  wrkSeconds: number;
  wrkConnections: number;
  warmupSeconds: number;
  leakSeconds: number;
  leakRate: number;
  /** Paired A/B phase (paired.ts): wrk slices per comparison (A B B A …, an even number) and seconds per slice. */
  pairedSlices: number;
  pairedSeconds: number;
}

function basePlan(options: BenchOptions): Plan {
  if (options.smoke)
    return {
      kind: "smoke",
      reps: 1,
      rates: [100],
      latencyMs: 1000,
      latencyWarmupMs: 0,
      wrkSeconds: 1,
      wrkConnections: 10,
      warmupSeconds: 0,
      leakSeconds: 0,
      leakRate: 0,
      pairedSlices: 2,
      pairedSeconds: 1,
    };
  if (options.quick)
    return {
      kind: "quick",
      reps: 1,
      rates: [1000],
      latencyMs: 1500,
      latencyWarmupMs: 200,
      wrkSeconds: 2,
      wrkConnections: 50,
      warmupSeconds: 0.5,
      leakSeconds: 0,
      leakRate: 0,
      pairedSlices: 4,
      pairedSeconds: 1,
    };
  const leakSeconds = options.leakSeconds ?? 60;
  return {
    kind: "full",
    reps: 3,
    rates: [500, 1000],
    latencyMs: 4000,
    latencyWarmupMs: 500,
    wrkSeconds: 5,
    wrkConnections: 50,
    warmupSeconds: 2,
    leakSeconds,
    leakRate: 1000,
    pairedSlices: 10,
    pairedSeconds: 2,
  };
}

export function planFor(options: BenchOptions): Plan {
  const plan = basePlan(options);
  return { ...plan, pairedSlices: options.pairedSlices ?? plan.pairedSlices, pairedSeconds: options.pairedSeconds ?? plan.pairedSeconds };
}

interface ProcStats {
  cpu: { user: number; system: number };
  rss: number;
  peakRss: number;
  memory: NodeJS.MemoryUsage;
  /** Cluster targets on SQLite (servers/gateway-cluster.ts). */
  sqliteBusyRetries?: number;
}

interface Target {
  name: TargetName;
  url: string;
  headers: Record<string, string>;
  /** The gateway process (none for direct). */
  child: Child | null;
  idleRss?: number;
}

export interface LatencyRun {
  rep: number;
  target: TargetName;
  mode: Mode;
  rate: number;
  result: OpenLoopResult;
  cpuMicrosPerRequest: number | null;
  peakRss: number | null;
}

export interface ThroughputRun {
  rep: number;
  target: TargetName;
  mode: Mode;
  result: WrkResult;
  cpuMicrosPerRequest: number | null;
  peakRss: number | null;
  /** The target's CPU over the run in cores (CPU time / wall time; every process of a cluster target). */
  cpuCores?: number | null;
  /** SQLite billing batches that found another worker holding the write lock (cluster targets on SQLite). */
  sqliteBusyRetries?: number | null;
}

export interface LeakCheck {
  target: TargetName;
  seconds: number;
  rate: number;
  samples: Array<{ t: number; rss: number; heapUsed: number; heapTotal: number; external: number }>;
  heapAfterGcBefore: number;
  heapAfterGcAfter: number;
  /** Memory outside V8's heap (Buffers, ArrayBuffers, native) after a full GC, before and after. */
  externalAfterGcBefore: number;
  externalAfterGcAfter: number;
  rssFirstThird: number;
  rssLastThird: number;
  rssSlopeMiBPerMin: number;
  result: OpenLoopResult;
}

export interface RequestLogCounts {
  written: number;
  dropped: number;
  buffered: number;
}

export interface BenchResults {
  meta: {
    startedAt: string;
    finishedAt: string;
    plan: Plan;
    node: string;
    cpus: number;
    cpuModel: string;
    memoryMiB: number;
    wrk: string | null;
    postgres: boolean;
    peer: boolean;
    notes: string[];
  };
  targets: TargetName[];
  idleRss: Partial<Record<TargetName, number>>;
  endIdleRss: Partial<Record<TargetName, number>>;
  /** Per gateway at the end: request log entries written and dropped (null: the log is off). */
  requestLog?: Partial<Record<TargetName, RequestLogCounts | null>>;
  latency: LatencyRun[];
  throughput: ThroughputRun[];
  /** The paired A/B phase: one entry per on/off comparison whose two targets ran (paired.ts). */
  paired?: PairedRun[];
  leak: LeakCheck | null;
}

/** One request through a target; throws with the answer when it is not a proper completion. */
async function checkAnswers(target: Target): Promise<void> {
  for (const stream of [false, true]) {
    const res = await request(target.url, { method: "POST", headers: target.headers, body: requestBody(stream), headersTimeout: 10_000, bodyTimeout: 10_000 });
    const text = await res.body.text();
    const good = res.statusCode === 200 && text.includes("Hello") && (!stream || text.includes("[DONE]"));
    if (!good) throw new Error(`${target.name} does not answer a ${stream ? "streaming" : "buffered"} request properly: ${res.statusCode} ${text.slice(0, 300)}`);
  }
}

export async function runBench(options: BenchOptions = {}): Promise<BenchResults> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const plan = planFor(options);
  const smoke = plan.kind === "smoke";
  const notes: string[] = [];
  const startedAt = new Date().toISOString();
  const adminUrl = options.postgresAdminUrl ?? process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const createdDatabases: string[] = [];
  const wrk = ensureWrk({ install: options.installWrk ?? !smoke });
  if (!wrk.ok) {
    if (!smoke) throw new Error(wrk.reason);
    notes.push(`wrk missing: throughput phase skipped (${wrk.reason})`);
  }

  try {
    // ---- processes --------------------------------------------------------------------------
    log("bench: starting the mock upstream");
    const mock = forkChild("mock-upstream", MOCK_SCRIPT, {});
    const mockPort = (await waitForMessage(mock, isType<{ type: "ready"; port: number }>("ready"), 30_000)).port;
    const mockUrl = `http://127.0.0.1:${mockPort}`;

    const usePostgres = !smoke && options.postgres !== false && (await postgresReachable(adminUrl));
    if (!smoke && options.postgres !== false && !usePostgres) notes.push(`PostgreSQL not reachable at ${adminUrl.replace(/\/\/[^@]*@/, "//")}: PostgreSQL figures not measured.`);
    const usePeer = !smoke && options.peer !== false;

    const names: TargetName[] = selectTargets(
      smoke
        ? ["direct", "ours-sqlite", "ours-sqlite-metrics", "ours-sqlite-nolog"]
        : ALL_TARGETS.filter((name) => (usePostgres || !POSTGRES_TARGETS.includes(name)) && (usePeer || name !== "peer")),
    );
    const targets = new Map<TargetName, Target>();
    targets.set("direct", {
      name: "direct",
      url: `${mockUrl}/v1/chat/completions`,
      headers: { "content-type": "application/json", authorization: "Bearer sk-direct-0000000000000000" },
      child: null,
    });

    const startOurs = async (name: TargetName, billing: boolean, databaseUrl: string | null, limits = false, env: NodeJS.ProcessEnv = {}): Promise<void> => {
      const nodeFlags = ["--expose-gc", ...(options.profileDir && name === "ours-sqlite" ? ["--cpu-prof", `--cpu-prof-dir=${options.profileDir}`] : [])];
      const gateway = await startOurGateway(name, { mockUrl, billing: billing ? "on" : "off", limits: limits ? "on" : "off", databaseUrl, nodeFlags, env });
      targets.set(name, { name, ...gateway });
    };
    const newDatabase = async (): Promise<string> => {
      const { url, name } = await createBenchDatabase(adminUrl, "gw_bench");
      createdDatabases.push(name);
      return url;
    };

    log("bench: compiling the gateway (tsc, incremental)");
    const buildWarning = buildGateway();
    if (buildWarning) {
      log(`bench: ${buildWarning}`);
      notes.push(buildWarning);
    }
    log(`bench: starting gateways: ${names.filter((n) => n !== "direct").join(", ")}`);
    if (names.includes("ours-sqlite")) await startOurs("ours-sqlite", true, null);
    // The same gateway with GET /metrics configured (every request recorded) and tracing off (no OTEL_*).
    if (names.includes("ours-sqlite-metrics")) await startOurs("ours-sqlite-metrics", true, null, false, { BENCH_METRICS: "on", OTEL_TRACES_EXPORTER: "" });
    // The same gateway with the request log off: what writing it costs (every other target logs).
    if (names.includes("ours-sqlite-nolog")) await startOurs("ours-sqlite-nolog", true, null, false, { BENCH_REQUEST_LOG: "off" });
    if (names.includes("ours-sqlite-nobill")) await startOurs("ours-sqlite-nobill", false, null);
    if (names.includes("ours-sqlite-limits")) await startOurs("ours-sqlite-limits", true, null, true);
    if (names.includes("ours-pg")) await startOurs("ours-pg", true, await newDatabase());
    if (names.includes("ours-pg-nobill")) await startOurs("ours-pg-nobill", false, await newDatabase());
    if (names.includes("ours-pg-limits")) await startOurs("ours-pg-limits", true, await newDatabase(), true);
    // `gateway serve --workers N` itself (servers/gateway-cluster.ts), billing on. "-primary": the
    // primary commits every worker's billing writes (GATEWAY_SQLITE_SHARED_WRITER=1, ADR 0047).
    const startCluster = async (name: TargetName, databaseUrl: string | null, workers = 2, env: Record<string, string> = {}): Promise<void> => {
      const gateway = await startOurGateway(name, {
        mockUrl,
        billing: "on",
        databaseUrl,
        nodeFlags: ["--expose-gc"],
        script: GATEWAY_CLUSTER_SCRIPT,
        env: { BENCH_WORKERS: String(workers), ...env },
      });
      targets.set(name, { name, ...gateway });
    };
    if (names.includes("ours-sqlite-2w")) await startCluster("ours-sqlite-2w", null);
    if (names.includes("ours-sqlite-2w-primary")) await startCluster("ours-sqlite-2w-primary", null, 2, { GATEWAY_SQLITE_SHARED_WRITER: "1" });
    if (names.includes("ours-sqlite-4w")) await startCluster("ours-sqlite-4w", null, 4);
    if (names.includes("ours-sqlite-4w-primary")) await startCluster("ours-sqlite-4w-primary", null, 4, { GATEWAY_SQLITE_SHARED_WRITER: "1" });
    if (names.includes("ours-pg-2w")) await startCluster("ours-pg-2w", await newDatabase());
    if (names.includes("floor-2p")) {
      const child = forkChild("floor-2p", FLOOR_SCRIPT, { env: { BENCH_MOCK_URL: mockUrl, BENCH_FLOOR_PROCESSES: "2" } });
      const ready = await waitForMessage(child, isType<{ type: "ready"; port: number }>("ready"), 30_000);
      targets.set("floor-2p", { name: "floor-2p", url: `http://127.0.0.1:${ready.port}/v1/chat/completions`, headers: { "content-type": "application/json" }, child });
    }
    if (names.includes("floor")) {
      // What Node.js, loopback TCP and one more process hop cost here (servers/minimal-proxy.ts).
      const child = forkChild("floor", FLOOR_SCRIPT, { env: { BENCH_MOCK_URL: mockUrl } });
      const ready = await waitForMessage(child, isType<{ type: "ready"; port: number }>("ready"), 30_000);
      targets.set("floor", { name: "floor", url: `http://127.0.0.1:${ready.port}/v1/chat/completions`, headers: { "content-type": "application/json" }, child });
    }
    if (names.includes("peer")) {
      const entry = join(repoDir, "node_modules", "@portkey-ai", "gateway", "build", "start-server.js");
      const child = forkChild("peer", entry, { execArgv: ["--expose-gc", "--import", PORTKEY_PRELOAD], args: ["--port=0", "--headless"], env: { NODE_ENV: "production" } });
      const ready = await waitForMessage(child, isType<{ type: "ready"; port: number }>("ready"), 60_000);
      targets.set("peer", {
        name: "peer",
        url: `http://127.0.0.1:${ready.port}/v1/chat/completions`,
        headers: { "content-type": "application/json", authorization: "Bearer sk-peer-0000000000000000", "x-portkey-provider": "openai", "x-portkey-custom-host": `${mockUrl}/v1` },
        child,
      });
    }

    log("bench: checking that every target answers a buffered and a streaming request");
    for (const name of names) await checkAnswers(targets.get(name)!);

    const loadgen = forkChild("open-loop", LOADGEN_SCRIPT, {});
    await waitForMessage(loadgen, isType<{ type: "ready" }>("ready"), 30_000);

    const idleRss: BenchResults["idleRss"] = {};
    for (const name of names) {
      const child = targets.get(name)!.child;
      if (child) idleRss[name] = (await ask<ProcStats & { type: string }>(child, "stats")).rss;
    }

    // ---- measurement helpers ------------------------------------------------------------------
    let jobId = 0;
    const openLoop = async (
      target: Target,
      mode: Mode,
      rate: number,
      durationMs: number,
      warmupMs: number,
    ): Promise<{ result: OpenLoopResult; cpu: number | null; peak: number | null }> => {
      const before = target.child ? await ask<ProcStats & { type: string }>(target.child, "stats") : null;
      if (target.child) await ask(target.child, "reset-peak");
      const job: OpenLoopJob = {
        type: "run",
        id: ++jobId,
        url: target.url,
        headers: target.headers,
        body: requestBody(mode === "stream"),
        rate,
        durationMs,
        warmupMs,
        connections: 128,
        drainTimeoutMs: 5_000,
        // Half a second of backlog: beyond that the target cannot sustain the rate (reported as such).
        maxInFlight: Math.max(100, Math.round(rate / 2)),
        expect: mode === "stream" ? "[DONE]" : "Hello",
      };
      const answer = waitForMessage(
        loadgen,
        (m: unknown): m is OpenLoopResult | { type: "error"; id: number; message: string } =>
          isType<OpenLoopResult>("result")(m) || isType<{ type: "error"; id: number; message: string }>("error")(m),
        durationMs + warmupMs + 60_000,
      );
      loadgen.proc.send(job);
      const message = await answer;
      if (message.type === "error") throw new Error(`open-loop client: ${(message as { message: string }).message}`);
      const result = message;
      if (result.overloaded) {
        notes.push(`${target.name} ${mode} @${rate}/s: overloaded — more than ${job.maxInFlight} requests unanswered, sending stopped after ${result.sent} requests`);
        await sleep(2_000); // let the target work off its backlog before the next run
      }
      if (result.errors + result.non2xx + result.timeouts + result.badBodies > 0) {
        notes.push(
          `${target.name} ${mode} @${rate}/s: ${result.errors} errors, ${result.non2xx} non-2xx, ${result.timeouts} timeouts, ${result.badBodies} bad bodies (first: ${result.firstError ?? "?"})`,
        );
      }
      if (!target.child || !before) return { result, cpu: null, peak: null };
      const after = await ask<ProcStats & { type: string }>(target.child, "stats");
      const cpu = after.cpu.user + after.cpu.system - (before.cpu.user + before.cpu.system);
      return { result, cpu: cpu / Math.max(1, result.sent), peak: after.peakRss };
    };

    const closedLoop = async (
      target: Target,
      mode: Mode,
      seconds: number,
    ): Promise<{ result: WrkResult; cpu: number | null; peak: number | null; cores: number | null; busy: number | null }> => {
      const script = writeWrkScript(requestBody(mode === "stream"), target.headers);
      const before = target.child ? await ask<ProcStats & { type: string }>(target.child, "stats") : null;
      if (target.child) await ask(target.child, "reset-peak");
      const started = performance.now();
      const result = await runWrk(target.url, script, { connections: plan.wrkConnections, threads: 1, durationS: seconds });
      const wallMicros = (performance.now() - started) * 1000;
      if (result.non2xx + result.errors > 0) notes.push(`${target.name} ${mode} wrk: ${result.non2xx} non-2xx, ${result.errors} socket errors`);
      if (!target.child || !before) return { result, cpu: null, peak: null, cores: null, busy: null };
      const after = await ask<ProcStats & { type: string }>(target.child, "stats");
      const cpu = after.cpu.user + after.cpu.system - (before.cpu.user + before.cpu.system);
      const busy = after.sqliteBusyRetries !== undefined && before.sqliteBusyRetries !== undefined ? after.sqliteBusyRetries - before.sqliteBusyRetries : null;
      return { result, cpu: cpu / Math.max(1, result.requests), peak: after.peakRss, cores: cpu / wallMicros, busy };
    };

    // ---- warm-up (JIT, connection pools, SQLite pages): not recorded ----------------------------
    if (plan.warmupSeconds > 0) {
      log("bench: warm-up");
      const keep = notes.length;
      for (const name of names)
        for (const mode of ["buffered", "stream"] as const)
          await openLoop(targets.get(name)!, mode, 500, (CLUSTER_TARGETS.includes(name) ? Math.min(1, plan.warmupSeconds) : plan.warmupSeconds) * 1000, 0);
      notes.length = keep; // errors while warming up are not results
    }

    // ---- latency at fixed rates, interleaved ---------------------------------------------------
    const latency: LatencyRun[] = [];
    const latencyTargets = (rate: number): TargetName[] =>
      names.filter((n) => !CLUSTER_TARGETS.includes(n) && (["direct", "floor", "ours-sqlite", "ours-sqlite-metrics", "peer"].includes(n) || rate === Math.max(...plan.rates)));
    const measureAll = !options.pairedOnly;
    if (!measureAll) notes.push("--paired-only: the paired A/B phase alone (after the warm-up); latency, throughput, memory under load and the leak check not measured.");
    for (let rep = 1; measureAll && rep <= plan.reps; rep++) {
      for (const mode of ["buffered", "stream"] as const) {
        for (const rate of plan.rates) {
          for (const name of latencyTargets(rate)) {
            log(`bench: latency rep ${rep}/${plan.reps} ${mode} ${rate}/s ${name}`);
            const { result, cpu, peak } = await openLoop(targets.get(name)!, mode, rate, plan.latencyMs, plan.latencyWarmupMs);
            latency.push({ rep, target: name, mode, rate, result, cpuMicrosPerRequest: cpu, peakRss: peak });
          }
        }
      }
    }

    // ---- maximum throughput with wrk, interleaved ----------------------------------------------
    // The on/off variants (paired.ts) get their verdicts from the paired phase below: here they run
    // once, for the table, instead of every repetition.
    const comparisons = wrk.ok ? PAIRED_COMPARISONS.filter((c) => names.includes(c.on) && names.includes(c.off)) : [];
    const pairedVariants = new Set<TargetName>(comparisons.flatMap((c) => [c.on, c.off]).filter((n) => n !== "ours-sqlite" && n !== "ours-pg"));
    const throughput: ThroughputRun[] = [];
    if (wrk.ok && measureAll) {
      for (let rep = 1; rep <= plan.reps; rep++) {
        for (const mode of ["buffered", "stream"] as const) {
          const list = (
            mode === "buffered" ? names : names.filter((n) => ["direct", "floor", "ours-sqlite", "ours-sqlite-nolog", "ours-pg", "peer", ...CLUSTER_TARGETS].includes(n))
          ).filter((n) => rep === 1 || !pairedVariants.has(n));
          for (const name of list) {
            log(`bench: throughput rep ${rep}/${plan.reps} ${mode} ${name} (wrk, ${plan.wrkConnections} connections, ${plan.wrkSeconds}s)`);
            const { result, cpu, peak, cores, busy } = await closedLoop(targets.get(name)!, mode, plan.wrkSeconds);
            throughput.push({ rep, target: name, mode, result, cpuMicrosPerRequest: cpu, peakRss: peak, cpuCores: cores, sqliteBusyRetries: busy });
          }
        }
      }
    }

    // ---- paired A/B: short wrk slices A B B A … per on/off comparison, a ratio per adjacent pair ----
    const paired: PairedRun[] = [];
    for (const comparison of comparisons) {
      const run: PairedRun = { key: comparison.key, on: comparison.on, off: comparison.off, sliceSeconds: plan.pairedSeconds, slices: [] };
      log(`bench: paired ${comparison.key}: ${plan.pairedSlices} slices of ${plan.pairedSeconds}s, ${comparison.on} / ${comparison.off} (A B B A …)`);
      for (const side of pairedSchedule(plan.pairedSlices)) {
        const name = side === "on" ? comparison.on : comparison.off;
        // Only one target runs at a time: the server's CPU over the slice is this target's.
        const serverBefore = POSTGRES_TARGETS.includes(name) ? postgresCpuMicros() : null;
        const { result, cpu } = await closedLoop(targets.get(name)!, "buffered", plan.pairedSeconds);
        const serverAfter = serverBefore === null ? null : postgresCpuMicros();
        const serverCpu = serverBefore === null || serverAfter === null || result.requests === 0 ? null : (serverAfter - serverBefore) / result.requests;
        run.slices.push({
          target: name,
          rps: result.rps,
          requests: result.requests,
          cpuMicrosPerRequest: cpu,
          serverCpuMicrosPerRequest: serverCpu,
          failed: result.non2xx + result.errors,
        });
      }
      paired.push(run);
    }

    // ---- leak check: RSS, heap and external memory over a long run at the 1,000 req/s of the targets --
    let leak: LeakCheck | null = null;
    if (measureAll && plan.leakSeconds > 0 && names.includes("ours-sqlite")) {
      const target = targets.get("ours-sqlite")!;
      const child = target.child!;
      log(`bench: leak check, ${plan.leakSeconds}s at ${plan.leakRate}/s buffered+stream alternating on ours-sqlite`);
      await ask(child, "gc");
      const before = await ask<ProcStats & { type: string }>(child, "stats");
      const samples: LeakCheck["samples"] = [];
      const t0 = Date.now();
      let sampling = true;
      const sampler = (async () => {
        for (let i = 0; sampling && i < plan.leakSeconds * 2 + 60; i++) {
          const s = await ask<ProcStats & { type: string }>(child, "stats");
          samples.push({ t: (Date.now() - t0) / 1000, rss: s.rss, heapUsed: s.memory.heapUsed, heapTotal: s.memory.heapTotal, external: s.memory.external });
          await sleep(1000);
        }
      })();
      // Half buffered, half streaming, one after the other in 10 s slices.
      const slices = Math.max(1, Math.round(plan.leakSeconds / 10));
      let last: OpenLoopResult | null = null;
      for (let i = 0; i < slices; i++) {
        last = (await openLoop(target, i % 2 === 0 ? "buffered" : "stream", plan.leakRate, (plan.leakSeconds * 1000) / slices, 0)).result;
      }
      sampling = false;
      await sampler;
      await ask(child, "gc");
      const after = await ask<ProcStats & { type: string }>(child, "stats");
      const third = Math.max(1, Math.floor(samples.length / 3));
      const rssFirstThird = median(samples.slice(0, third).map((s) => s.rss));
      const rssLastThird = median(samples.slice(-third).map((s) => s.rss));
      const half = samples.slice(Math.floor(samples.length / 2));
      leak = {
        target: "ours-sqlite",
        seconds: plan.leakSeconds,
        rate: plan.leakRate,
        samples,
        heapAfterGcBefore: before.memory.heapUsed,
        heapAfterGcAfter: after.memory.heapUsed,
        externalAfterGcBefore: before.memory.external,
        externalAfterGcAfter: after.memory.external,
        rssFirstThird,
        rssLastThird,
        rssSlopeMiBPerMin:
          (slope(
            half.map((s) => s.t),
            half.map((s) => s.rss),
          ) *
            60) /
          2 ** 20,
        result: last!,
      };
    }

    const endIdleRss: BenchResults["endIdleRss"] = {};
    await sleep(smoke ? 0 : 1000);
    for (const name of names) {
      const child = targets.get(name)!.child;
      if (child) endIdleRss[name] = (await ask<ProcStats & { type: string }>(child, "stats")).rss;
    }

    // The request log under load: every entry written, none dropped (it is the correctness half of its verdict).
    const requestLog: NonNullable<BenchResults["requestLog"]> = {};
    for (const name of names) {
      const child = targets.get(name)!.child;
      if (!child || name.startsWith("floor") || name === "peer") continue;
      const counts = (await ask<{ type: string; counts: RequestLogCounts | null }>(child, "request-log", 30_000)).counts;
      requestLog[name] = counts;
      if (counts !== null && counts.dropped > 0) notes.push(`${name}: the request log dropped ${counts.dropped} entries (wrote ${counts.written}).`);
    }

    log("bench: stopping processes");
    await stopChild(loadgen);
    for (const name of names) {
      const child = targets.get(name)!.child;
      if (child) await stopChild(child, 10_000);
    }
    await stopChild(mock);

    return {
      meta: {
        startedAt,
        finishedAt: new Date().toISOString(),
        plan,
        node: process.version,
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model ?? "unknown",
        memoryMiB: Math.round(totalmem() / 2 ** 20),
        wrk: wrk.ok ? wrk.version : null,
        postgres: usePostgres,
        peer: usePeer,
        notes,
      },
      targets: names,
      idleRss,
      endIdleRss,
      requestLog,
      latency,
      throughput,
      paired,
      leak,
    };
  } finally {
    await killAll();
    for (const db of createdDatabases) await dropBenchDatabase(adminUrl, db);
  }
}
