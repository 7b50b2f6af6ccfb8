// Turns the raw runs into medians, comparisons and the target verdicts, as JSON and Markdown.
import type { BenchResults, Mode } from "./bench.js";
import { formatSpread, summarizePaired, type PairedSummary } from "./paired.js";
import { median } from "./stats.js";
import { CLUSTER_TARGETS, TARGET_LABELS, targetOrder as order, type TargetName } from "./targets.js";

export type Status = "met" | "missed" | "undecided" | "not measured";

export interface TargetVerdict {
  goal: string;
  limit: string;
  measured: string;
  value: number | null;
  status: Status;
  note?: string;
}

export interface LatencyRow {
  target: TargetName;
  mode: Mode;
  rate: number;
  runs: number;
  /** Runs in which the target could not sustain the rate (percentiles then cover answered requests only). */
  overloadedRuns: number;
  ttlbP50: number;
  ttlbP99: number;
  ttfbP50: number;
  ttfbP99: number;
  addedTtlbP50: number | null;
  addedTtlbP99: number | null;
  addedTtfbP50: number | null;
  addedTtfbP99: number | null;
  cpuMicrosPerRequest: number | null;
  achievedRate: number;
  lagP99: number;
  peakRssMiB: number | null;
}

export interface ThroughputRow {
  target: TargetName;
  mode: Mode;
  runs: number;
  rps: number;
  rpsRuns: number[];
  cpuMicrosPerRequest: number | null;
  peakRssMiB: number | null;
  wrkP50: number;
  wrkP99: number;
  /** Median CPU of the target's processes over a run, in cores (null: not measured, e.g. direct). */
  cpuCores: number | null;
  /** Median per run of SQLite billing batches that found another worker holding the write lock (cluster on SQLite). */
  sqliteBusyRetries: number | null;
}

export interface Summary {
  latency: LatencyRow[];
  throughput: ThroughputRow[];
  ratios: Record<string, number | null>;
  memory: Array<{ target: TargetName; idleMiB: number | null; peakMiB: number | null; endIdleMiB: number | null }>;
  leak: null | {
    seconds: number;
    rssFirstThirdMiB: number;
    rssLastThirdMiB: number;
    growthMiB: number;
    slopeMiBPerMin: number;
    heapAfterGcBeforeMiB: number;
    heapAfterGcAfterMiB: number;
    externalAfterGcBeforeMiB: number;
    externalAfterGcAfterMiB: number;
  };
  /** The paired A/B phase's on/off comparisons (paired.ts); the verdicts with a target are in `verdicts` too. */
  paired: PairedSummary[];
  verdicts: TargetVerdict[];
}

const MiB = 2 ** 20;
const mib = (bytes: number | null | undefined) => (bytes == null || !Number.isFinite(bytes) ? null : bytes / MiB);
const maxOf = (values: Array<number | null>) => {
  const finite = values.filter((v): v is number => v !== null && Number.isFinite(v));
  return finite.length ? Math.max(...finite) : null;
};
const medianOrNull = (values: Array<number | null>) => {
  const finite = values.filter((v): v is number => v !== null && Number.isFinite(v));
  return finite.length ? median(finite) : null;
};

export function summarizeResults(r: BenchResults): Summary {
  const latency: LatencyRow[] = [];
  const keys = new Set(r.latency.map((run) => `${run.target}|${run.mode}|${run.rate}`));
  for (const key of keys) {
    const [target, mode, rateText] = key.split("|") as [TargetName, Mode, string];
    const rate = Number(rateText);
    const runs = r.latency.filter((x) => x.target === target && x.mode === mode && x.rate === rate);
    // Added latency: per repetition, this target minus direct in the same repetition (adjacent in
    // time), then the median over repetitions.
    const added = (pick: (x: (typeof runs)[number]) => number) => {
      if (target === "direct") return null;
      const diffs = runs.flatMap((run) => {
        const direct = r.latency.find((x) => x.target === "direct" && x.mode === mode && x.rate === rate && x.rep === run.rep);
        return direct && !run.result.overloaded && !direct.result.overloaded ? [pick(run) - pick(direct)] : [];
      });
      return diffs.length ? median(diffs) : null;
    };
    latency.push({
      target,
      mode,
      rate,
      runs: runs.length,
      overloadedRuns: runs.filter((x) => x.result.overloaded).length,
      ttlbP50: median(runs.map((x) => x.result.ttlb.p50)),
      ttlbP99: median(runs.map((x) => x.result.ttlb.p99)),
      ttfbP50: median(runs.map((x) => x.result.ttfb.p50)),
      ttfbP99: median(runs.map((x) => x.result.ttfb.p99)),
      addedTtlbP50: added((x) => x.result.ttlb.p50),
      addedTtlbP99: added((x) => x.result.ttlb.p99),
      addedTtfbP50: added((x) => x.result.ttfb.p50),
      addedTtfbP99: added((x) => x.result.ttfb.p99),
      cpuMicrosPerRequest: medianOrNull(runs.map((x) => x.cpuMicrosPerRequest)),
      achievedRate: median(runs.map((x) => x.result.achievedRate)),
      lagP99: median(runs.map((x) => x.result.lag.p99)),
      peakRssMiB: mib(maxOf(runs.map((x) => x.peakRss))),
    });
  }

  const throughput: ThroughputRow[] = [];
  const tkeys = new Set(r.throughput.map((run) => `${run.target}|${run.mode}`));
  for (const key of tkeys) {
    const [target, mode] = key.split("|") as [TargetName, Mode];
    const runs = r.throughput.filter((x) => x.target === target && x.mode === mode);
    throughput.push({
      target,
      mode,
      runs: runs.length,
      rps: median(runs.map((x) => x.result.rps)),
      rpsRuns: runs.map((x) => Math.round(x.result.rps)),
      cpuMicrosPerRequest: medianOrNull(runs.map((x) => x.cpuMicrosPerRequest)),
      peakRssMiB: mib(maxOf(runs.map((x) => x.peakRss))),
      wrkP50: median(runs.map((x) => x.result.p50)),
      wrkP99: median(runs.map((x) => x.result.p99)),
      cpuCores: medianOrNull(runs.map((x) => x.cpuCores ?? null)),
      sqliteBusyRetries: medianOrNull(runs.map((x) => x.sqliteBusyRetries ?? null)),
    });
  }
  const rps = (target: TargetName, mode: Mode) => throughput.find((t) => t.target === target && t.mode === mode)?.rps ?? null;
  const ratio = (a: number | null, b: number | null) => (a !== null && b !== null && b > 0 ? a / b : null);
  const ratios: Summary["ratios"] = {
    "ours/peer buffered": ratio(rps("ours-sqlite", "buffered"), rps("peer", "buffered")),
    "ours/peer stream": ratio(rps("ours-sqlite", "stream"), rps("peer", "stream")),
    "ours/direct buffered": ratio(rps("ours-sqlite", "buffered"), rps("direct", "buffered")),
    "SQLite metrics on/off (tracing off)": ratio(rps("ours-sqlite-metrics", "buffered"), rps("ours-sqlite", "buffered")),
    "SQLite request log on/off (buffered)": ratio(rps("ours-sqlite", "buffered"), rps("ours-sqlite-nolog", "buffered")),
    "SQLite request log on/off (stream)": ratio(rps("ours-sqlite", "stream"), rps("ours-sqlite-nolog", "stream")),
    "SQLite billing on/off": ratio(rps("ours-sqlite", "buffered"), rps("ours-sqlite-nobill", "buffered")),
    "PostgreSQL billing on/off": ratio(rps("ours-pg", "buffered"), rps("ours-pg-nobill", "buffered")),
    "PostgreSQL/SQLite (billing on)": ratio(rps("ours-pg", "buffered"), rps("ours-sqlite", "buffered")),
    "SQLite limits on/off (billing on)": ratio(rps("ours-sqlite-limits", "buffered"), rps("ours-sqlite", "buffered")),
    "PostgreSQL limits on/off (billing on)": ratio(rps("ours-pg-limits", "buffered"), rps("ours-pg", "buffered")),
    "SQLite 2 workers / 1 worker (buffered)": ratio(rps("ours-sqlite-2w", "buffered"), rps("ours-sqlite", "buffered")),
    "SQLite 2 workers / 1 worker (stream)": ratio(rps("ours-sqlite-2w", "stream"), rps("ours-sqlite", "stream")),
    "SQLite 4 workers / 1 worker (buffered)": ratio(rps("ours-sqlite-4w", "buffered"), rps("ours-sqlite", "buffered")),
    "SQLite 2 workers, writer in the primary / in each worker (buffered)": ratio(rps("ours-sqlite-2w-primary", "buffered"), rps("ours-sqlite-2w", "buffered")),
    "SQLite 4 workers, writer in the primary / in each worker (buffered)": ratio(rps("ours-sqlite-4w-primary", "buffered"), rps("ours-sqlite-4w", "buffered")),
    "PostgreSQL 2 workers / 1 worker (buffered)": ratio(rps("ours-pg-2w", "buffered"), rps("ours-pg", "buffered")),
    "PostgreSQL 2 workers / 1 worker (stream)": ratio(rps("ours-pg-2w", "stream"), rps("ours-pg", "stream")),
    "floor 2 processes / 1 process (buffered)": ratio(rps("floor-2p", "buffered"), rps("floor", "buffered")),
    "floor 2 processes / 1 process (stream)": ratio(rps("floor-2p", "stream"), rps("floor", "stream")),
  };

  const peakOf = (target: TargetName) =>
    mib(maxOf([...r.latency.filter((x) => x.target === target).map((x) => x.peakRss), ...r.throughput.filter((x) => x.target === target).map((x) => x.peakRss)]));
  const memory = r.targets
    .filter((t) => t !== "direct")
    .map((target) => ({ target, idleMiB: mib(r.idleRss[target]), peakMiB: peakOf(target), endIdleMiB: mib(r.endIdleRss[target]) }));

  const leak = r.leak
    ? {
        seconds: r.leak.seconds,
        rssFirstThirdMiB: r.leak.rssFirstThird / MiB,
        rssLastThirdMiB: r.leak.rssLastThird / MiB,
        growthMiB: (r.leak.rssLastThird - r.leak.rssFirstThird) / MiB,
        slopeMiBPerMin: r.leak.rssSlopeMiBPerMin,
        heapAfterGcBeforeMiB: r.leak.heapAfterGcBefore / MiB,
        heapAfterGcAfterMiB: r.leak.heapAfterGcAfter / MiB,
        externalAfterGcBeforeMiB: r.leak.externalAfterGcBefore / MiB,
        externalAfterGcAfterMiB: r.leak.externalAfterGcAfter / MiB,
      }
    : null;

  const row = (target: TargetName, mode: Mode, rate: number) => latency.find((x) => x.target === target && x.mode === mode && x.rate === rate);
  const verdicts: TargetVerdict[] = [];
  const judge = (goal: string, limit: string, value: number | null, ok: (v: number) => boolean, show: (v: number) => string, note?: string) =>
    verdicts.push({
      goal,
      limit,
      value,
      measured: value === null ? "—" : show(value),
      status: value === null ? "not measured" : ok(value) ? "met" : "missed",
      ...(note && { note }),
    });
  const ms = (us: number) => `${(us / 1000).toFixed(3)} ms`;
  const b1000 = row("ours-sqlite", "buffered", 1000);
  const s1000 = row("ours-sqlite", "stream", 1000);
  const latencyJudge = (goal: string, limit: string, r: LatencyRow | undefined, value: number | null | undefined, max: number) => {
    if (r && r.overloadedRuns > 0) {
      verdicts.push({
        goal,
        limit,
        value: null,
        measured: `not sustained: overloaded at ${r.rate.toLocaleString("en-US")} req/s in ${r.overloadedRuns}/${r.runs} runs (backlog limit reached; answered requests p50 ${msf(r.ttlbP50)} ms, gateway CPU ${f0(r.cpuMicrosPerRequest)} µs/req)`,
        status: "missed",
      });
    } else judge(goal, limit, value ?? null, (v) => v <= max, ms);
  };
  latencyJudge("Added latency at 1,000 req/s, billing on, SQLite: p50", "≤ 0.3 ms", b1000, b1000?.addedTtlbP50, 300);
  latencyJudge("Added latency at 1,000 req/s, billing on, SQLite: p99", "≤ 2 ms", b1000, b1000?.addedTtlbP99, 2000);
  latencyJudge("Streaming: added time to first byte at 1,000 req/s, p50", "≤ 0.5 ms", s1000, s1000?.addedTtfbP50, 500);
  const x = (v: number) => `${v.toFixed(2)}×`;
  judge("Maximum throughput (50 connections, buffered): ours / peer", "≥ 3×", ratios["ours/peer buffered"] ?? null, (v) => v >= 3, x);
  judge("Maximum throughput (50 connections, streaming): ours / peer", "≥ 3×", ratios["ours/peer stream"] ?? null, (v) => v >= 3, x);
  const oursPeak = maxOf(memory.filter((m) => m.target.startsWith("ours")).map((m) => m.peakMiB));
  judge(
    "Resident memory under load (peak of every run of our gateway)",
    "≤ 150 MiB",
    oursPeak,
    (v) => v <= 150,
    (v) => `${v.toFixed(1)} MiB`,
  );
  judge(
    `No RSS growth over a ${leak?.seconds ?? 60} s run (last third vs first third)`,
    "no growth (≤ 5 MiB; heap and external memory after GC each ≤ +2 MiB)",
    leak ? leak.growthMiB : null,
    (v) => v <= 5 && leak!.heapAfterGcAfterMiB - leak!.heapAfterGcBeforeMiB <= 2 && leak!.externalAfterGcAfterMiB - leak!.externalAfterGcBeforeMiB <= 2,
    (v) =>
      `${v >= 0 ? "+" : ""}${v.toFixed(1)} MiB RSS; after GC heap ${leak!.heapAfterGcBeforeMiB.toFixed(1)} → ${leak!.heapAfterGcAfterMiB.toFixed(1)} MiB, ` +
      `external ${leak!.externalAfterGcBeforeMiB.toFixed(1)} → ${leak!.externalAfterGcAfterMiB.toFixed(1)} MiB`,
    leak ? undefined : "only in the full run",
  );
  // The on/off verdicts (limits, metrics, request log) from the paired phase: the median pair ratio
  // with its spread, undecided when the spread reaches well across the target (paired.ts, judgeSpread).
  const paired = summarizePaired(r.paired ?? []);
  for (const p of paired) {
    if (p.minRatio === null) continue;
    verdicts.push({
      goal: `${p.goal} (paired)`,
      limit: `≥ ${p.minRatio.toFixed(2)}×`,
      value: p.rps?.median ?? null,
      measured: formatSpread(p.rps),
      status: p.status,
      note: `gateway CPU/request on/off ${formatSpread(p.cpu)}: ${p.cpuStatus} against ≤ ${(1 / p.minRatio).toFixed(2)}×`,
    });
  }
  judge("PostgreSQL throughput / SQLite throughput (billing on)", "≥ 0.5×", ratios["PostgreSQL/SQLite (billing on)"] ?? null, (v) => v >= 0.5, x);
  // Several workers: the ratio to one worker, read against what two processes of the floor gain on the
  // same cores (wrk and the mock share them) and the CPU the gateway's processes got during the runs.
  const cores = (target: TargetName, mode: Mode) => throughput.find((t) => t.target === target && t.mode === mode)?.cpuCores ?? null;
  for (const [database, one, two] of [
    ["SQLite", "ours-sqlite", "ours-sqlite-2w"],
    ["PostgreSQL", "ours-pg", "ours-pg-2w"],
  ] as const) {
    for (const mode of ["buffered", "stream"] as const) {
      const floorRatio = ratios[`floor 2 processes / 1 process (${mode})`] ?? null;
      const note = `gateway CPU ${f2(cores(one, mode))} → ${f2(cores(two, mode))} cores; the floor's 2 processes / 1: ${floorRatio === null ? "—" : x(floorRatio)}`;
      judge(
        `Maximum throughput (${mode === "buffered" ? "buffered" : "streaming"}, ${database}, billing on): 2 workers / 1 worker`,
        "≥ 1.6×",
        ratios[`${database} 2 workers / 1 worker (${mode})`] ?? null,
        (v) => v >= 1.6,
        x,
        note,
      );
    }
  }
  const perWorkerPeak = maxOf(memory.filter((m) => m.target === "ours-sqlite-2w" || m.target === "ours-pg-2w").map((m) => m.peakMiB));
  judge(
    "Resident memory per worker under load, 2 workers (peak of the largest worker)",
    "≤ 150 MiB",
    perWorkerPeak,
    (v) => v <= 150,
    (v) => `${v.toFixed(1)} MiB`,
  );
  return { latency, throughput, ratios, memory, leak, paired, verdicts };
}

const f1 = (v: number | null | undefined) => (v == null || !Number.isFinite(v) ? "—" : v.toFixed(1));
const f2 = (v: number | null | undefined) => (v == null || !Number.isFinite(v) ? "—" : v.toFixed(2));
const f0 = (v: number | null | undefined) => (v == null || !Number.isFinite(v) ? "—" : Math.round(v).toLocaleString("en-US"));
const msf = (us: number | null | undefined) => (us == null || !Number.isFinite(us) ? "—" : (us / 1000).toFixed(3));
const signed = (us: number | null | undefined) => (us == null || !Number.isFinite(us) ? "—" : `${us >= 0 ? "+" : ""}${(us / 1000).toFixed(3)}`);

export function renderMarkdown(r: BenchResults, s: Summary): string {
  const p = r.meta.plan;
  const out: string[] = [];
  out.push(`# Benchmark results (${p.kind} run)`, "");
  out.push(
    `${r.meta.finishedAt} · Node ${r.meta.node} · ${r.meta.cpus} × ${r.meta.cpuModel} · ${r.meta.memoryMiB} MiB RAM · ${r.meta.wrk ?? "wrk not available"}`,
    "",
    `Everything on 127.0.0.1 on this ${r.meta.cpus}-core machine: the mock upstream, the gateway under test and the load generator share the cores, so every figure includes that contention. ` +
      `${p.reps} interleaved repetition(s) per figure (A B A B …), medians shown. Latency: open-loop client at a fixed rate, ${p.latencyMs / 1000} s measured after ${p.latencyWarmupMs / 1000} s unmeasured per run. ` +
      `Throughput: wrk, ${p.wrkConnections} connections, 1 thread, ${p.wrkSeconds} s per run; the on/off variants (limits, metrics, request log, billing off) only in the first repetition, their verdicts coming from the paired A/B phase. Added latency = gateway minus direct in the same repetition, median over repetitions. ` +
      `A run is **overloaded** when more than half a second of requests is unanswered: sending stops, its percentiles cover answered requests only and no added latency is computed from it.`,
    "",
  );
  out.push("## Targets", "", "| Target | Goal | Measured | Status |", "|---|---|---|---|");
  for (const v of s.verdicts) out.push(`| ${v.goal} | ${v.limit} | ${v.measured}${v.note ? ` (${v.note})` : ""} | **${v.status}** |`);
  out.push("");

  for (const mode of ["buffered", "stream"] as const) {
    const rows = s.latency.filter((x) => x.mode === mode).sort((a, b) => a.rate - b.rate || order(a.target) - order(b.target));
    if (rows.length === 0) continue;
    out.push(`## Latency at a fixed rate, ${mode === "buffered" ? "buffered" : "streaming (≈10 chunks)"} (ms)`, "");
    if (mode === "buffered") {
      out.push("| rate | target | p50 | p99 | added p50 | added p99 | gateway CPU µs/req | achieved req/s | client lag p99 |", "|---|---|---|---|---|---|---|---|---|");
      for (const x of rows)
        out.push(
          `| ${x.rate}/s | ${TARGET_LABELS[x.target]}${over(x)} | ${msf(x.ttlbP50)} | ${msf(x.ttlbP99)} | ${signed(x.addedTtlbP50)} | ${signed(x.addedTtlbP99)} | ${f0(x.cpuMicrosPerRequest)} | ${f0(x.achievedRate)} | ${msf(x.lagP99)} |`,
        );
    } else {
      out.push(
        "| rate | target | TTFB p50 | TTFB p99 | last byte p50 | last byte p99 | added TTFB p50 | added TTFB p99 | added last byte p50 | added last byte p99 | gateway CPU µs/req |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
      );
      for (const x of rows)
        out.push(
          `| ${x.rate}/s | ${TARGET_LABELS[x.target]}${over(x)} | ${msf(x.ttfbP50)} | ${msf(x.ttfbP99)} | ${msf(x.ttlbP50)} | ${msf(x.ttlbP99)} | ${signed(x.addedTtfbP50)} | ${signed(x.addedTtfbP99)} | ${signed(x.addedTtlbP50)} | ${signed(x.addedTtlbP99)} | ${f0(x.cpuMicrosPerRequest)} |`,
        );
    }
    out.push("");
  }

  if (s.throughput.length) {
    out.push(`## Maximum throughput (wrk, ${p.wrkConnections} connections, closed loop)`, "");
    out.push(
      "| mode | target | req/s (median) | runs | gateway CPU µs/req | gateway CPU cores | peak RSS MiB | wrk p50 ms | wrk p99 ms |",
      "|---|---|---|---|---|---|---|---|---|",
    );
    for (const x of [...s.throughput].sort((a, b) => a.mode.localeCompare(b.mode) || order(a.target) - order(b.target)))
      out.push(
        `| ${x.mode} | ${TARGET_LABELS[x.target]} | ${f0(x.rps)} | ${x.rpsRuns.join(", ")} | ${f0(x.cpuMicrosPerRequest)} | ${f2(x.cpuCores)} | ${f1(x.peakRssMiB)}${CLUSTER_TARGETS.includes(x.target) ? " (per process)" : ""} | ${msf(x.wrkP50)} | ${msf(x.wrkP99)} |`,
      );
    const busy = s.throughput.filter((x) => x.sqliteBusyRetries !== null && x.target.startsWith("ours-sqlite-") && CLUSTER_TARGETS.includes(x.target));
    if (busy.length > 0)
      out.push(
        "",
        `SQLite with several workers: write batches that found another process holding the write lock (and retried 1 ms later), median per run: ${busy.map((x) => `${x.target} ${x.mode} ${f0(x.sqliteBusyRetries)} (of ${f0(x.rps * p.wrkSeconds)} requests)`).join(", ")}.`,
      );
    out.push("", "| ratio | value |", "|---|---|");
    for (const [name, value] of Object.entries(s.ratios)) out.push(`| ${name} | ${value === null ? "—" : `${value.toFixed(2)}×`} |`);
    out.push("");
  }

  if (s.paired.length) {
    out.push(
      `## Paired A/B (wrk, ${p.wrkConnections} connections, buffered, slices A B B A …)`,
      "",
      "Each comparison: its two targets (already started and warm) in alternating wrk slices; one on/off ratio per adjacent pair of slices; " +
        "median, interquartile range and range over the pairs. A verdict is met or missed by the median, and undecided when the interquartile range reaches " +
        "more than 0.02 across the target on the other side, or with fewer than 3 pairs (bench/README.md, “Paired A/B verdicts”). " +
        "A slice with failed requests is left out of its pair. PostgreSQL CPU: all the server's processes over the slice (from /proc), for the PostgreSQL comparisons.",
      "",
      "| comparison | slices | req/s on; off (median) | throughput on/off | gateway CPU µs/req on/off | PostgreSQL CPU µs/req on/off | target | status (throughput; CPU) |",
      "|---|---|---|---|---|---|---|---|",
    );
    for (const x of s.paired)
      out.push(
        `| ${x.goal} | ${x.slices} × ${x.sliceSeconds} s | ${f0(x.rpsOn)}; ${f0(x.rpsOff)} | ${formatSpread(x.rps)} | ${formatSpread(x.cpu)} | ${formatSpread(x.serverCpu)} | ${x.minRatio === null ? "— (reported)" : `≥ ${x.minRatio.toFixed(2)}×; CPU ≤ ${(1 / x.minRatio).toFixed(2)}×`} | ${x.minRatio === null ? "—" : `**${x.status}**; ${x.cpuStatus}`} |`,
      );
    out.push("");
  }

  const logged = Object.entries(r.requestLog ?? {}).filter(([, counts]) => counts !== null);
  if (logged.length > 0) {
    out.push("## Request log", "", "| target | entries written | dropped |", "|---|---|---|");
    for (const [target, counts] of logged) out.push(`| ${TARGET_LABELS[target as TargetName]} | ${counts!.written} | ${counts!.dropped} |`);
    out.push("");
  }
  out.push("## Resident memory (MiB)", "", "| target | idle after start | peak under load | idle at the end |", "|---|---|---|---|");
  for (const m of s.memory) out.push(`| ${TARGET_LABELS[m.target]} | ${f1(m.idleMiB)} | ${f1(m.peakMiB)} | ${f1(m.endIdleMiB)} |`);
  out.push("");
  if (s.leak) {
    out.push(
      `## Leak check (${s.leak.seconds} s at ${r.leak!.rate} req/s, buffered and streaming alternating, ours on SQLite)`,
      "",
      `RSS median of the first third ${s.leak.rssFirstThirdMiB.toFixed(1)} MiB, of the last third ${s.leak.rssLastThirdMiB.toFixed(1)} MiB (growth ${s.leak.growthMiB.toFixed(1)} MiB); slope over the second half ${s.leak.slopeMiBPerMin.toFixed(2)} MiB/min. ` +
        `Heap used after a full GC: ${s.leak.heapAfterGcBeforeMiB.toFixed(1)} MiB before, ${s.leak.heapAfterGcAfterMiB.toFixed(1)} MiB after; ` +
        `external memory (Buffers, native) after a full GC: ${s.leak.externalAfterGcBeforeMiB.toFixed(1)} MiB before, ${s.leak.externalAfterGcAfterMiB.toFixed(1)} MiB after. ` +
        `Every second's RSS, heap and external memory are in latest.json (leak.samples).`,
      "",
    );
  }
  if (r.meta.notes.length) {
    out.push("## Notes", "");
    for (const note of r.meta.notes) out.push(`- ${note}`);
    out.push("");
  }
  return `${out.join("\n")}\n`;
}

const over = (x: LatencyRow) => (x.overloadedRuns > 0 ? ` **overloaded in ${x.overloadedRuns}/${x.runs} runs**` : "");
