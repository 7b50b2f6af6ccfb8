// The ledger-growth step's targets (issue 26 items 3 and 4) and its section of bench/results/latest.md.
import type { LedgerGrowthRun, Timing } from "./ledger-growth.js";

export interface LedgerGrowthVerdict {
  goal: string;
  limit: string;
  measured: string;
  value: number | null;
  status: "met" | "missed" | "not measured";
  note?: string;
}

const count = (n: number) => n.toLocaleString("en-US");
const ms = (t: Timing) => `p50 ${t.p50Ms.toFixed(1)} ms, p95 ${t.p95Ms.toFixed(1)} ms`;

/** Per database: /v1/usage p95 under 50 ms, and pairs per second within 10% of the empty ledger's. */
export function ledgerGrowthVerdicts(runs: readonly LedgerGrowthRun[]): LedgerGrowthVerdict[] {
  const verdicts: LedgerGrowthVerdict[] = [];
  for (const run of runs) {
    // The goal is stated at 10M rows; fewer (the fill's time budget) is said next to the figure.
    const note = run.rows < run.rowsTarget ? `at ${count(run.rows)} rows, not ${count(run.rowsTarget)}: the fill's time budget` : undefined;
    verdicts.push({
      goal: `/v1/usage over 30 days, key with ${count(run.busyKeyRows)} of ${count(run.rows)} ledger rows, ${run.database}: p95`,
      limit: "< 50 ms",
      value: run.usage.p95Ms,
      measured: `${run.usage.p95Ms.toFixed(1)} ms`,
      status: run.usage.p95Ms < 50 ? "met" : "missed",
      ...(note && { note }),
    });
    verdicts.push({
      goal: `Admission + settlement throughput, ${count(run.rows)}-row ledger / empty ledger, ${run.database}`,
      limit: "≥ 0.9×",
      value: run.throughputRatio,
      measured: `${run.throughputRatio.toFixed(2)}× (${run.pairUsFilled.toFixed(0)} vs ${run.pairUsEmpty.toFixed(0)} µs/pair; CPU ${run.cpuRatio.toFixed(2)}×, ${run.pairCpuUsFilled.toFixed(0)} vs ${run.pairCpuUsEmpty.toFixed(0)} µs/pair)`,
      status: run.throughputRatio >= 0.9 ? "met" : "missed",
      ...(note && { note }),
    });
  }
  return verdicts;
}

export function renderLedgerGrowth(runs: readonly LedgerGrowthRun[]): string[] {
  if (runs.length === 0) return [];
  const out = ["## Ledger growth", ""];
  out.push(
    "A ledger filled with valid, chained rows (bench/lib/ledger-fill.ts; a busy key holds a tenth of them, all in the last 30 days) against an empty one, " +
      "measured in-process (the functions behind the routes, no HTTP). Pairs: admission + settlement, 16 in flight, interleaved empty/filled 5 times (which goes first alternates), medians of wall time and of the process's CPU time. " +
      "The fill stops at its time budget: the rows reached are shown.",
    "",
    "| database | rows | fill | µs/pair empty | µs/pair filled | CPU µs/pair empty | CPU µs/pair filled | /v1/usage 30 d | dashboard usage 30 d | admin usage 7 d | ledger page 1 | ledger deep page | CSV first page | CSV rows/s |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  );
  for (const r of runs) {
    out.push(
      `| ${r.database} | ${count(r.rows)} | ${r.fillSeconds.toFixed(0)} s | ${r.pairUsEmpty.toFixed(0)} | ${r.pairUsFilled.toFixed(0)} | ${r.pairCpuUsEmpty.toFixed(0)} | ${r.pairCpuUsFilled.toFixed(0)} | ${ms(r.usage)} | ${ms(r.dashboardUsage)} | ${ms(r.adminUsage)} | ${ms(r.ledgerFirstPage)} | ${ms(r.ledgerDeepPage)} | ${r.csvFirstPageMs.toFixed(1)} ms | ${count(Math.round(r.csvRowsPerSecond))} |`,
    );
  }
  out.push("", "| Target | Goal | Measured | Status |", "|---|---|---|---|");
  for (const v of ledgerGrowthVerdicts(runs)) out.push(`| ${v.goal} | ${v.limit} | ${v.measured}${v.note ? ` (${v.note})` : ""} | **${v.status}** |`);
  out.push("");
  return out;
}
