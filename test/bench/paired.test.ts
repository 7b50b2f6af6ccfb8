// The paired A/B verdicts of the bench report: the A B B A schedule, one ratio per adjacent pair, and
// the met / missed / undecided rule. Pure data in, verdict out; no processes, no timing.
import { describe, expect, it } from "vitest";
import { planFor, type BenchResults } from "../../bench/lib/bench.js";
import { judgeSpread, pairedSchedule, pairRatios, spreadOf, type PairedRun } from "../../bench/lib/paired.js";
import { renderMarkdown, summarizeResults } from "../../bench/lib/report.js";

/** A limits run whose pairs have these on/off throughput ratios (off at 1,000 req/s, CPU the inverse). */
function limitsRun(ratios: number[]): PairedRun {
  const schedule = pairedSchedule(ratios.length * 2);
  return {
    key: "sqlite-limits",
    on: "ours-sqlite-limits",
    off: "ours-sqlite",
    sliceSeconds: 2,
    slices: schedule.map((side, i) => {
      const ratio = ratios[i >> 1]!;
      const rps = side === "on" ? 1000 * ratio : 1000;
      return { target: side === "on" ? "ours-sqlite-limits" : "ours-sqlite", rps, requests: rps * 2, cpuMicrosPerRequest: 500_000 / rps, failed: 0 };
    }),
  };
}

function results(paired: PairedRun[]): BenchResults {
  return {
    meta: { startedAt: "", finishedAt: "", plan: planFor({ quick: true }), node: "", cpus: 2, cpuModel: "", memoryMiB: 0, wrk: null, postgres: false, peer: false, notes: [] },
    targets: ["direct", "ours-sqlite", "ours-sqlite-limits"],
    idleRss: {},
    endIdleRss: {},
    latency: [],
    throughput: [],
    paired,
    leak: null,
  };
}

function limitsVerdict(ratios: number[]) {
  const verdict = summarizeResults(results([limitsRun(ratios)])).verdicts.find((v) => v.goal.includes("limits enabled"));
  expect(verdict).toBeDefined();
  return verdict!;
}

describe("bench paired A/B", () => {
  it("alternates A B B A A B B A, each adjacent pair one of each", () => {
    expect(pairedSchedule(8)).toEqual(["on", "off", "off", "on", "on", "off", "off", "on"]);
  });

  it("takes one on/off ratio per adjacent pair, whichever side ran first", () => {
    expect(pairRatios(limitsRun([0.9, 1.1, 1]), (s) => s.rps).map((r) => Number(r.toFixed(6)))).toEqual([0.9, 1.1, 1]);
  });

  it("is met when the median and most of the spread are above the target", () => {
    const verdict = limitsVerdict([0.97, 0.99, 1.01, 0.96, 0.98]);
    expect(verdict.status).toBe("met");
    expect(verdict.measured).toBe("0.98× (IQR 0.97–0.99, range 0.96–1.01, 5 pairs)");
    expect(verdict.note).toContain("gateway CPU/request on/off 1.02×");
  });

  it("is missed when the median and most of the spread are below the target", () => {
    expect(limitsVerdict([0.8, 0.85, 0.9, 0.88, 0.93]).status).toBe("missed");
  });

  it("is undecided when the spread reaches well across the target, or with fewer than 3 pairs", () => {
    // Median 0.96 (met by itself) but a quarter of the pairs at 0.8 or below: noise decides.
    expect(limitsVerdict([0.7, 0.8, 0.96, 1.1, 1.2]).status).toBe("undecided");
    expect(limitsVerdict([0.99, 1]).status).toBe("undecided");
  });

  it("judges CPU per request against the inverse target (≤ 1/0.95)", () => {
    expect(judgeSpread(spreadOf([1.0, 1.01, 1.02, 1.03]), 1 / 0.95, false)).toBe("met");
    expect(judgeSpread(spreadOf([1.1, 1.12, 1.15, 1.2]), 1 / 0.95, false)).toBe("missed");
    expect(judgeSpread(spreadOf([0.9, 1.0, 1.1, 1.2]), 1 / 0.95, false)).toBe("undecided");
  });

  it("leaves out a pair whose slice had failed requests", () => {
    const run = limitsRun([0.5, 1, 1, 1]);
    run.slices[0] = { ...run.slices[0]!, failed: 3 };
    const summary = summarizeResults(results([run])).paired[0]!;
    expect(summary.rps?.n).toBe(3);
    expect(summary.status).toBe("met");
  });

  it("shows the paired table in the report", () => {
    const r = results([limitsRun([0.97, 0.99, 1.01])]);
    const markdown = renderMarkdown(r, summarizeResults(r));
    expect(markdown).toContain("## Paired A/B");
    expect(markdown).toContain("| 6 × 2 s | 990; 1,000 | 0.99× (IQR 0.98–1.00, range 0.97–1.01, 3 pairs)");
  });
});
