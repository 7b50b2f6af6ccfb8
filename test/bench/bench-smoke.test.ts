// Runs the bench machinery for about a second (mock upstream, our gateway on SQLite with billing,
// the open-loop client, wrk when installed) and checks that it produced measurements and a report.
// No timing assertions: figures on a shared CI machine mean nothing.
import { describe, expect, it } from "vitest";
import { runBench } from "../../bench/lib/bench.js";
import { renderMarkdown, summarizeResults } from "../../bench/lib/report.js";

describe("bench smoke", () => {
  it("starts every process, measures direct and our gateway, and stops them", async () => {
    const lines: string[] = [];
    const results = await runBench({ smoke: true, log: (line) => lines.push(line) });
    // ours-sqlite writes the request log (the default); ours-sqlite-nolog is the same gateway without it.
    expect(results.targets).toEqual(["direct", "ours-sqlite", "ours-sqlite-metrics", "ours-sqlite-nolog"]);
    for (const mode of ["buffered", "stream"] as const) {
      for (const target of results.targets) {
        const run = results.latency.find((r) => r.target === target && r.mode === mode);
        expect(run, `${target} ${mode}`).toBeDefined();
        expect(run!.result.ok).toBeGreaterThan(0);
        expect(run!.result.errors + run!.result.non2xx + run!.result.badBodies).toBe(0);
      }
    }
    const ours = results.latency.find((r) => r.target === "ours-sqlite");
    expect(ours!.cpuMicrosPerRequest).toBeGreaterThan(0);
    expect(results.idleRss["ours-sqlite"]).toBeGreaterThan(0);
    if (results.meta.wrk) expect(results.throughput.some((r) => r.target === "ours-sqlite" && r.result.requests > 0)).toBe(true);
    // The paired A/B phase: metrics and request log on/off, one pair of slices each in the smoke run.
    if (results.meta.wrk) {
      expect(results.paired?.map((p) => p.key)).toEqual(["metrics", "request-log"]);
      for (const run of results.paired!) {
        expect(run.slices.map((s) => s.target)).toEqual([run.on, run.off]);
        for (const slice of run.slices) expect(slice.requests).toBeGreaterThan(0);
        expect(run.slices[0]!.cpuMicrosPerRequest).toBeGreaterThan(0);
      }
    }

    // The request log kept up: every request to ours-sqlite written (warm-up requests too), none dropped; off in ours-sqlite-nolog.
    const sent = results.latency.filter((r) => r.target === "ours-sqlite").reduce((n, r) => n + r.result.ok, 0);
    const logged = results.requestLog?.["ours-sqlite"];
    expect(logged).toBeTruthy();
    expect(logged!.dropped).toBe(0);
    expect(logged!.buffered).toBe(0);
    expect(logged!.written).toBeGreaterThanOrEqual(sent);
    expect(results.requestLog?.["ours-sqlite-nolog"]).toBeNull();

    const summary = summarizeResults(results);
    const markdown = renderMarkdown(results, summary);
    expect(markdown).toContain("## Targets");
    expect(markdown).toContain("## Request log");
    if (results.meta.wrk) expect(markdown).toContain("## Paired A/B");
    expect(summary.verdicts.length).toBeGreaterThan(0);
  }, 180_000);
});
