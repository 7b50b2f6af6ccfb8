// The leak verdict of the bench report: growth of RSS, of the heap after GC or of external memory
// after GC each turns it to missed. Pure data in, verdict out; no processes, no timing.
import { describe, expect, it } from "vitest";
import { planFor, type BenchResults, type LeakCheck } from "../../bench/lib/bench.js";
import { renderMarkdown, summarizeResults } from "../../bench/lib/report.js";

const MiB = 2 ** 20;

function resultsWithLeak(leak: Partial<LeakCheck>): BenchResults {
  const base: LeakCheck = {
    target: "ours-sqlite",
    seconds: 600,
    rate: 1000,
    samples: [],
    heapAfterGcBefore: 25 * MiB,
    heapAfterGcAfter: 25 * MiB,
    externalAfterGcBefore: 4 * MiB,
    externalAfterGcAfter: 4 * MiB,
    rssFirstThird: 130 * MiB,
    rssLastThird: 131 * MiB,
    rssSlopeMiBPerMin: 0,
    result: {
      type: "result",
      id: 1,
      sent: 0,
      measured: 0,
      ok: 0,
      errors: 0,
      non2xx: 0,
      timeouts: 0,
      badBodies: 0,
      overloaded: false,
      achievedRate: 0,
      ttfb: stats(),
      ttlb: stats(),
      lag: stats(),
      clientCpuMicros: 0,
    },
  };
  return {
    meta: { startedAt: "", finishedAt: "", plan: planFor({ leakSeconds: 600 }), node: "", cpus: 2, cpuModel: "", memoryMiB: 0, wrk: null, postgres: false, peer: false, notes: [] },
    targets: ["direct", "ours-sqlite"],
    idleRss: {},
    endIdleRss: {},
    latency: [],
    throughput: [],
    leak: { ...base, ...leak },
  };
}

function stats() {
  return { count: 0, mean: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 };
}

function leakVerdict(results: BenchResults) {
  const verdict = summarizeResults(results).verdicts.find((v) => v.goal.startsWith("No RSS growth"));
  expect(verdict).toBeDefined();
  return verdict!;
}

describe("bench report: leak verdict", () => {
  it("is met when RSS, heap and external memory stay flat, and names the run's length", () => {
    const verdict = leakVerdict(resultsWithLeak({}));
    expect(verdict.status).toBe("met");
    expect(verdict.goal).toContain("600 s");
    expect(verdict.measured).toBe("+1.0 MiB RSS; after GC heap 25.0 → 25.0 MiB, external 4.0 → 4.0 MiB");
  });

  it("is missed when RSS grows more than 5 MiB", () => {
    expect(leakVerdict(resultsWithLeak({ rssLastThird: 136 * MiB })).status).toBe("missed");
  });

  it("is missed when the heap after GC grows more than 2 MiB, RSS flat", () => {
    expect(leakVerdict(resultsWithLeak({ heapAfterGcAfter: 27.5 * MiB })).status).toBe("missed");
  });

  it("is missed when external memory after GC grows more than 2 MiB, RSS and heap flat", () => {
    const results = resultsWithLeak({ externalAfterGcAfter: 6.5 * MiB });
    expect(leakVerdict(results).status).toBe("missed");
    expect(renderMarkdown(results, summarizeResults(results))).toContain("external memory (Buffers, native) after a full GC: 4.0 MiB before, 6.5 MiB after");
  });
});
