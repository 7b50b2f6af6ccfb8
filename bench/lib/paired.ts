// Paired A/B measurements: the on/off verdicts (limits, metrics, request log, billing) decided from
// short wrk slices of the two targets alternating A B B A A B …, both already started and warm, one
// on/off ratio per adjacent pair of slices. On a noisy host the repetitions of one target spread up to
// 2× over minutes; two slices a few seconds apart share the host's state, so their ratio keeps the
// difference between the targets and cancels most of the drift, and the A B B A order cancels a
// steady trend within the pairs. The verdict is the median of the pair ratios, judged with its spread.
import { median } from "./stats.js";
import type { TargetName } from "./targets.js";

export interface PairedComparison {
  key: string;
  /** The verdict's wording ("on / off" is `on` over `off`). */
  goal: string;
  on: TargetName;
  off: TargetName;
  /** Least on/off throughput ratio that meets the target; null: reported only, no target. */
  minRatio: number | null;
}

export const PAIRED_COMPARISONS: readonly PairedComparison[] = [
  { key: "sqlite-limits", goal: "Maximum throughput (buffered, SQLite, billing on): limits enabled / not", on: "ours-sqlite-limits", off: "ours-sqlite", minRatio: 0.95 },
  { key: "pg-limits", goal: "Maximum throughput (buffered, PostgreSQL, billing on): limits enabled / not", on: "ours-pg-limits", off: "ours-pg", minRatio: 0.95 },
  { key: "metrics", goal: "Maximum throughput (buffered, SQLite, billing on): metrics on / off (tracing off)", on: "ours-sqlite-metrics", off: "ours-sqlite", minRatio: 0.97 },
  { key: "request-log", goal: "Maximum throughput (buffered, SQLite, billing on): request log on / off", on: "ours-sqlite", off: "ours-sqlite-nolog", minRatio: 0.97 },
  { key: "sqlite-billing", goal: "Maximum throughput (buffered, SQLite): billing on / off", on: "ours-sqlite", off: "ours-sqlite-nobill", minRatio: null },
  { key: "pg-billing", goal: "Maximum throughput (buffered, PostgreSQL): billing on / off", on: "ours-pg", off: "ours-pg-nobill", minRatio: null },
];

/** How far (in ratio) the interquartile range may reach across the target before the verdict is undecided. */
export const UNDECIDED_MARGIN = 0.02;
/** Fewer pairs than this decide nothing (the quick run's and the smoke test's). */
export const MIN_PAIRS = 3;

export interface PairedSlice {
  target: TargetName;
  rps: number;
  requests: number;
  /** The gateway's CPU (user + system) over the slice divided by its requests. */
  cpuMicrosPerRequest: number | null;
  /** The PostgreSQL server's CPU (all its processes) over the slice divided by its requests; null: a SQLite target or no /proc. */
  serverCpuMicrosPerRequest?: number | null;
  /** non-2xx answers and socket errors. */
  failed: number;
}

export interface PairedRun {
  key: string;
  on: TargetName;
  off: TargetName;
  sliceSeconds: number;
  /** In the order run: on, off, off, on, on, off, … */
  slices: PairedSlice[];
}

/** Which target slice i measures: A B B A A B B A … (each adjacent pair 2k, 2k+1 has one of each). */
export function pairedSchedule(slices: number): Array<"on" | "off"> {
  return Array.from({ length: slices }, (_, i) => (((i + 1) >> 1) % 2 === 0 ? "on" : "off"));
}

/** Per adjacent pair of slices (0,1), (2,3), …: on/off of the picked figure; pairs missing a figure are left out. */
export function pairRatios(run: PairedRun, pick: (slice: PairedSlice) => number | null): number[] {
  const ratios: number[] = [];
  for (let i = 0; i + 1 < run.slices.length; i += 2) {
    const pair = [run.slices[i]!, run.slices[i + 1]!];
    const on = pair.find((s) => s.target === run.on);
    const off = pair.find((s) => s.target === run.off);
    const a = on ? pick(on) : null;
    const b = off ? pick(off) : null;
    if (a !== null && b !== null && Number.isFinite(a) && Number.isFinite(b) && b > 0) ratios.push(a / b);
  }
  return ratios;
}

export interface Spread {
  n: number;
  median: number;
  q1: number;
  q3: number;
  min: number;
  max: number;
}

/** Linear-interpolation quantile of sorted values. */
function quantile(sorted: readonly number[], q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export function spreadOf(values: readonly number[]): Spread | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return { n: sorted.length, median: median(sorted), q1: quantile(sorted, 0.25), q3: quantile(sorted, 0.75), min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

export type PairedStatus = "met" | "missed" | "undecided" | "not measured";

/**
 * The rule (bench/README.md, "Paired A/B verdicts"): the median pair ratio decides on which side of
 * the target the verdict falls, and the interquartile range must not reach more than
 * UNDECIDED_MARGIN across the target on the other side; otherwise, or with fewer than MIN_PAIRS
 * pairs, it is undecided. `atLeast`: the ratio must be ≥ target (throughput); false: ≤ (CPU per request).
 */
export function judgeSpread(spread: Spread | null, target: number, atLeast = true): PairedStatus {
  if (spread === null) return "not measured";
  if (spread.n < MIN_PAIRS) return "undecided";
  if (!atLeast) return judgeSpread({ n: spread.n, median: -spread.median, q1: -spread.q3, q3: -spread.q1, min: -spread.max, max: -spread.min }, -target);
  if (spread.median >= target) return spread.q1 >= target - UNDECIDED_MARGIN ? "met" : "undecided";
  return spread.q3 < target + UNDECIDED_MARGIN ? "missed" : "undecided";
}

export interface PairedSummary {
  key: string;
  goal: string;
  on: TargetName;
  off: TargetName;
  minRatio: number | null;
  sliceSeconds: number;
  slices: number;
  /** on/off requests per second, per pair. */
  rps: Spread | null;
  /** on/off gateway CPU µs per request, per pair (more than 1: on costs more). */
  cpu: Spread | null;
  /** on/off PostgreSQL server CPU µs per request, per pair (PostgreSQL comparisons; reported, no target). */
  serverCpu: Spread | null;
  rpsOn: number | null;
  rpsOff: number | null;
  status: PairedStatus;
  /** The CPU ratio against the same target expressed as CPU: ≤ 1 / minRatio. */
  cpuStatus: PairedStatus;
}

export function summarizePaired(runs: readonly PairedRun[]): PairedSummary[] {
  return runs.map((run) => {
    const comparison = PAIRED_COMPARISONS.find((c) => c.key === run.key);
    const minRatio = comparison?.minRatio ?? null;
    const rps = spreadOf(pairRatios(run, (s) => (s.failed > 0 ? null : s.rps)));
    const cpu = spreadOf(pairRatios(run, (s) => (s.failed > 0 ? null : s.cpuMicrosPerRequest)));
    const serverCpu = spreadOf(pairRatios(run, (s) => (s.failed > 0 ? null : (s.serverCpuMicrosPerRequest ?? null))));
    const rpsOf = (target: TargetName) => {
      const values = run.slices.filter((s) => s.target === target).map((s) => s.rps);
      return values.length ? median(values) : null;
    };
    return {
      key: run.key,
      goal: comparison?.goal ?? run.key,
      on: run.on,
      off: run.off,
      minRatio,
      sliceSeconds: run.sliceSeconds,
      slices: run.slices.length,
      rps,
      cpu,
      serverCpu,
      rpsOn: rpsOf(run.on),
      rpsOff: rpsOf(run.off),
      status: minRatio === null ? (rps ? "undecided" : "not measured") : judgeSpread(rps, minRatio),
      cpuStatus: minRatio === null ? (cpu ? "undecided" : "not measured") : judgeSpread(cpu, 1 / minRatio, false),
    };
  });
}

const x2 = (v: number) => `${v.toFixed(2)}×`;

/** "0.97× (IQR 0.95–0.99, range 0.93–1.01, 5 pairs)" */
export function formatSpread(spread: Spread | null): string {
  if (spread === null) return "—";
  return `${x2(spread.median)} (IQR ${spread.q1.toFixed(2)}–${spread.q3.toFixed(2)}, range ${spread.min.toFixed(2)}–${spread.max.toFixed(2)}, ${spread.n} pair${spread.n === 1 ? "" : "s"})`;
}
