// The open-streams step (bench/streams.ts) in miniature: 50 streams of 10 tokens through the paced
// mock, our built gateway on SQLite and Portkey's gateway (when installed), so that the machinery
// (processes, file limits, probes, samplers, the ledger check, the report) is exercised in CI. No
// timing or memory assertions: on a shared machine those figures mean nothing at this size.
import { describe, expect, it } from "vitest";
import { renderStreamsMarkdown } from "../../bench/lib/streams/report.js";
import { runStreams } from "../../bench/lib/streams/run.js";
import { peerInstalled } from "../../bench/lib/streams/targets.js";

const STREAMS = 50;

describe("open-streams step, smoke", () => {
  it("streams through direct, ours and the peer; every stream finishes and ours bills each exactly once", async () => {
    const targets = peerInstalled() ? (["direct", "ours", "peer"] as const) : (["direct", "ours"] as const);
    const lines: string[] = [];
    const result = await runStreams({ streams: STREAMS, seconds: 1, intervalMs: 100, rampSeconds: 0.5, clients: 2, targets: [...targets], log: (line) => lines.push(line) });
    const report = renderStreamsMarkdown(result);

    expect(result.tokensPerStream).toBe(10);
    expect(result.runs.map((r) => r.target)).toEqual([...targets]);
    for (const run of result.runs) {
      expect({ target: run.target, opened: run.opened, finished: run.finished, errors: run.errors, samples: run.errorSamples }).toEqual({
        target: run.target,
        opened: STREAMS,
        finished: STREAMS,
        errors: 0,
        samples: [],
      });
      expect(run.ttftMs.count).toBe(STREAMS);
      expect(run.idleRssMiB).toBeGreaterThan(0);
      expect(run.peakFds).toBeGreaterThan(0);
    }
    const ours = result.runs.find((r) => r.target === "ours")!;
    expect(ours.loopDelayMs, "the probe answered").not.toBeNull();
    expect(ours.targetCpuSeconds).toBeGreaterThan(0);
    // 50 measured and 50 warm-up streams, one usage row each, at the cost each was told.
    expect(ours.books, report).toMatchObject({
      finishedStreams: 2 * STREAMS,
      ledgerRows: 2 * STREAMS,
      missing: 0,
      duplicates: 0,
      mismatches: [],
      withoutCost: 0,
      holdsLeft: 0,
      exact: true,
    });
    expect(ours.books!.clientTotalNano).toBeGreaterThan(0n);
    expect(ours.books!.ledgerTotalNano).toBe(ours.books!.clientTotalNano);
    // The file limits were read (and raised where lower than the step needs).
    for (const name of ["bench", "mock", "client-0", "ours"]) expect(result.fileLimits[name]?.soft, name).toBeGreaterThanOrEqual(STREAMS);
    expect(report).toContain("| streams finished / opened; errors |");
    expect(report).toContain("billed exactly once met");
    // Bounded, but generous: on a shared host each process start alone has taken tens of seconds.
  }, 600_000);
});
