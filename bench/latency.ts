// `node --import tsx bench/latency.ts [--rate 1000] [--seconds 4] [--reps 3] [--mode buffered|stream]
//   [--targets floor,sqlite,sqlite-nobill,pg,pg-nobill] [--env KEY=VALUE ...] [--node-flag FLAG ...] [--cpu-prof DIR]`
// A focused latency check for one change at a time: direct vs our gateway at one fixed rate, the same
// open-loop client and interleaving as `npm run bench`, in about a minute. Prints added p50/p99 (TTFB
// and TTLB) per repetition and their medians, with the gateway's CPU per request. --env and
// --node-flag pass settings to our gateway processes (e.g. --node-flag --max-semi-space-size=4); --cpu-prof writes each
// gateway's CPU profile at this rate into DIR/<target>/ (read it with `bench/profile.ts --read FILE`).
// Each run also prints the gateway's GC pauses (scavenges and mark-compacts: count, total, longest).
// BENCH_GATEWAY_STDOUT=1 lets the gateways' stdout through (with --node-flag --trace-gc, say, and
// --env BENCH_LOG_LEVEL=warn to keep the request lines out).
import type { OpenLoopJob, OpenLoopResult } from "./load/open-loop.js";
import { buildGateway, createBenchDatabase, dropBenchDatabase, FLOOR_SCRIPT, forkChild, isType, MOCK_SCRIPT, startOurGateway } from "./lib/servers.js";
import { requestBody } from "./lib/constants.js";
import { killAll, stopChildrenOnSignals, waitForMessage, type Child } from "./lib/procs.js";
import { median } from "./lib/stats.js";

stopChildrenOnSignals();
const args = process.argv.slice(2);
const valueOf = (flag: string, fallback: string) => {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1]! : fallback;
};
const rate = Number(valueOf("--rate", "1000"));
const seconds = Number(valueOf("--seconds", "4"));
const reps = Number(valueOf("--reps", "3"));
const mode = valueOf("--mode", "buffered");
const wanted = valueOf("--targets", "sqlite,sqlite-nobill").split(",");
const extraEnv: Record<string, string> = {};
const nodeFlags = args.flatMap((arg, i) => (arg === "--node-flag" ? [args[i + 1]!] : []));
args.forEach((arg, i) => {
  if (arg !== "--env") return;
  const [key, ...value] = args[i + 1]!.split("=");
  extraEnv[key!] = value.join("=");
});
const profileDir = valueOf("--cpu-prof", "");
const adminUrl = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const databases: string[] = [];

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  child: Child | null;
}

buildGateway();
try {
  const mock = forkChild("mock", MOCK_SCRIPT, {});
  const mockPort = (await waitForMessage(mock, isType<{ type: "ready"; port: number }>("ready"), 30_000)).port;
  const targets: Target[] = [{ name: "direct", url: `http://127.0.0.1:${mockPort}/v1/chat/completions`, headers: { "content-type": "application/json" }, child: null }];
  for (const name of wanted) {
    if (name === "floor") {
      const child = forkChild(name, FLOOR_SCRIPT, { env: { BENCH_MOCK_URL: `http://127.0.0.1:${mockPort}` } });
      const ready = await waitForMessage(child, isType<{ type: "ready"; port: number }>("ready"), 30_000);
      targets.push({ name, url: `http://127.0.0.1:${ready.port}/v1/chat/completions`, headers: { "content-type": "application/json" }, child });
      continue;
    }
    let databaseUrl = "";
    if (name.startsWith("pg")) {
      const created = await createBenchDatabase(adminUrl, "gw_lat");
      databases.push(created.name);
      databaseUrl = created.url;
    }
    const gateway = await startOurGateway(name, {
      mockUrl: `http://127.0.0.1:${mockPort}`,
      billing: name.endsWith("nobill") ? "off" : "on",
      databaseUrl,
      nodeFlags: [...nodeFlags, ...(profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}/${name}`] : [])],
      env: extraEnv,
      ...(process.env.BENCH_GATEWAY_STDOUT ? { stdout: "inherit" as const } : {}),
    });
    targets.push({ name, ...gateway });
  }
  const loadgen = forkChild("open-loop", new URL("./load/open-loop.ts", import.meta.url).pathname, {});
  await waitForMessage(loadgen, isType<{ type: "ready" }>("ready"), 30_000);
  let id = 0;
  type GcPauses = Record<"minor" | "major", { count: number; totalMs: number; maxMs: number }>;
  type Stats = { user: number; system: number; loop?: { p50: number; p99: number; max: number }; gc?: GcPauses };
  const cpuOf = async (target: Target): Promise<Stats> => {
    if (!target.child) return { user: 0, system: 0 };
    const answer = waitForMessage(
      target.child,
      isType<{ type: "stats"; cpu: { user: number; system: number }; loopDelayMs?: Stats["loop"]; gcPauses?: GcPauses }>("stats"),
      10_000,
    );
    target.child.proc.send({ type: "stats" });
    const { cpu, loopDelayMs, gcPauses } = await answer;
    return { ...cpu, ...(loopDelayMs && { loop: loopDelayMs }), ...(gcPauses && { gc: gcPauses }) };
  };
  const run = async (target: Target, durationMs: number): Promise<OpenLoopResult & { cpuPerRequest: { user: number; system: number }; loop?: Stats["loop"]; gc?: GcPauses }> => {
    const before = await cpuOf(target);
    if (target.child) {
      const reset = waitForMessage(target.child, isType<{ type: "reset-peak" }>("reset-peak"), 10_000);
      target.child.proc.send({ type: "reset-peak" });
      await reset;
    }
    const job: OpenLoopJob = {
      type: "run",
      id: ++id,
      url: target.url,
      headers: target.headers,
      body: requestBody(mode === "stream"),
      rate,
      durationMs,
      warmupMs: 500,
      connections: 128,
      drainTimeoutMs: 5_000,
      maxInFlight: Math.max(100, rate / 2),
      expect: mode === "stream" ? "[DONE]" : "Hello",
    };
    const answer = waitForMessage(loadgen, isType<OpenLoopResult>("result"), durationMs + 60_000);
    loadgen.proc.send(job);
    const result = await answer;
    const after = await cpuOf(target);
    const n = Math.max(1, result.sent);
    return {
      ...result,
      cpuPerRequest: { user: (after.user - before.user) / n, system: (after.system - before.system) / n },
      ...(after.loop && { loop: after.loop }),
      ...(after.gc && { gc: after.gc }),
    };
  };
  for (const target of targets) await run(target, 1500); // warm-up
  const added = new Map<string, { ttfb50: number[]; ttfb99: number[]; ttlb50: number[]; ttlb99: number[]; cpu: number[] }>();
  const gcText = (gc: GcPauses | undefined) =>
    gc
      ? `, GC pauses minor ${gc.minor.count}×/${gc.minor.totalMs.toFixed(0)} ms total/max ${gc.minor.maxMs.toFixed(1)}, major ${gc.major.count}×/${gc.major.totalMs.toFixed(0)}/${gc.major.maxMs.toFixed(1)}`
      : "";
  for (let rep = 1; rep <= reps; rep++) {
    const direct = await run(targets[0]!, seconds * 1000);
    process.stdout.write(`rep ${rep} direct: ttfb p50 ${direct.ttfb.p50.toFixed(0)} µs p99 ${direct.ttfb.p99.toFixed(0)} µs, client lag p99 ${direct.lag.p99.toFixed(0)} µs\n`);
    for (const target of targets.slice(1)) {
      const r = await run(target, seconds * 1000);
      const entry = added.get(target.name) ?? { ttfb50: [], ttfb99: [], ttlb50: [], ttlb99: [], cpu: [] };
      entry.cpu.push(r.cpuPerRequest.user + r.cpuPerRequest.system);
      entry.ttfb50.push(r.ttfb.p50 - direct.ttfb.p50);
      entry.ttfb99.push(r.ttfb.p99 - direct.ttfb.p99);
      entry.ttlb50.push(r.ttlb.p50 - direct.ttlb.p50);
      entry.ttlb99.push(r.ttlb.p99 - direct.ttlb.p99);
      added.set(target.name, entry);
      const flags = `${r.overloaded ? " OVERLOADED" : ""}${r.errors + r.non2xx + r.timeouts > 0 ? ` errors ${r.errors}/${r.non2xx}/${r.timeouts}` : ""}`;
      process.stdout.write(
        `rep ${rep} ${target.name}: added ttfb p50 ${(r.ttfb.p50 - direct.ttfb.p50).toFixed(0)} µs p99 ${(r.ttfb.p99 - direct.ttfb.p99).toFixed(0)} µs, ttlb p50 ${(r.ttlb.p50 - direct.ttlb.p50).toFixed(0)} µs, gateway CPU µs/request user ${r.cpuPerRequest.user.toFixed(0)} + system ${r.cpuPerRequest.system.toFixed(0)}${r.loop ? `, event-loop delay p50/p99/max ${r.loop.p50.toFixed(2)}/${r.loop.p99.toFixed(2)}/${r.loop.max.toFixed(1)} ms` : ""}${gcText(r.gc)}${flags}\n`,
      );
    }
  }
  process.stdout.write(`\n${mode} at ${rate}/s, medians of ${reps} (added over direct, µs):\n`);
  for (const [name, e] of added) {
    process.stdout.write(
      `  ${name.padEnd(14)} ttfb p50 ${median(e.ttfb50).toFixed(0).padStart(6)}  p99 ${median(e.ttfb99).toFixed(0).padStart(6)}   ttlb p50 ${median(e.ttlb50).toFixed(0).padStart(6)}  p99 ${median(e.ttlb99).toFixed(0).padStart(6)}   CPU/request ${median(e.cpu).toFixed(0).padStart(5)}\n`,
    );
  }
} finally {
  await killAll();
  for (const db of databases) await dropBenchDatabase(adminUrl, db);
}
process.exit(0);
