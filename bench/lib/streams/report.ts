// The open-streams step's report: one table of figures per target, the verdicts against issue 43's
// targets (met / missed; the step runs once, so a figure near its target is worth a rerun), and the
// file limits the bench set.
import type { StreamsResult, TargetRun } from "./run.js";

export const STREAM_TARGETS = { perStreamKiB: 48, loopDelayP99Ms: 20 } as const;

const f1 = (v: number | null | undefined) => (v === null || v === undefined || !Number.isFinite(v) ? "–" : v.toFixed(1));
const usd = (nano: bigint) => {
  const negative = nano < 0n;
  const abs = negative ? -nano : nano;
  return `${negative ? "−" : ""}${abs / 1_000_000_000n}.${(abs % 1_000_000_000n).toString().padStart(9, "0")}`;
};

export type Verdict = "met" | "missed" | "not measured";

export interface StreamVerdicts {
  perStream: Verdict;
  loopDelay: Verdict;
  errors: Verdict;
  billedOnce: Verdict;
}

export function judge(run: TargetRun): StreamVerdicts {
  const loop = run.loopDelayMs?.p99;
  return {
    perStream: Number.isFinite(run.perStreamKiB) ? (run.perStreamKiB <= STREAM_TARGETS.perStreamKiB ? "met" : "missed") : "not measured",
    loopDelay: loop === undefined ? "not measured" : loop <= STREAM_TARGETS.loopDelayP99Ms ? "met" : "missed",
    errors: run.errors === 0 && run.finished === run.opened ? "met" : "missed",
    billedOnce: run.books === null ? "not measured" : run.books.exact ? "met" : "missed",
  };
}

function books(run: TargetRun): string {
  const b = run.books;
  if (!b) return "–";
  return (
    `${b.finishedStreams} finished (warm-up included), ${b.ledgerRows} usage rows; missing ${b.missing}, duplicates ${b.duplicates}, ` +
    `cost mismatches ${b.mismatches.length}, without in-band cost ${b.withoutCost}, rows of unfinished streams ${b.otherRows}; ` +
    `finished streams: client ${usd(b.clientTotalNano)} USD, ledger ${usd(b.ledgerFinishedNano)} USD; all usage rows ${usd(b.ledgerTotalNano)} USD; ` +
    `holds left ${b.holdsLeft}`
  );
}

export function renderStreamsMarkdown(result: StreamsResult): string {
  const { options } = result;
  const direct = result.runs.find((r) => r.target === "direct");
  const lines = [
    `# Open streams, ${result.startedAt.slice(0, 16).replace("T", " ")} UTC`,
    "",
    `\`node --import tsx bench/streams.ts --streams ${options.streams} --seconds ${options.seconds} --interval-ms ${options.intervalMs} ` +
      `--ramp-seconds ${options.rampSeconds} --clients ${options.clients}\`: ${options.streams} concurrent streaming chat requests of ` +
      `${result.tokensPerStream} tokens, one every ${options.intervalMs} ms, opened evenly over ${options.rampSeconds} s by ${options.clients} ` +
      `client processes, through each target in turn (one gateway process each).`,
    "",
    "| figure | " + result.runs.map((r) => r.target).join(" | ") + " |",
    "|---|" + result.runs.map(() => "---|").join(""),
  ];
  const row = (name: string, cell: (r: TargetRun) => string) => lines.push(`| ${name} | ${result.runs.map(cell).join(" | ")} |`);
  row("streams finished / opened; errors", (r) => `${r.finished} / ${r.opened}; ${r.errors}`);
  row("time to first token p50; p99, ms", (r) => `${f1(r.ttftMs.p50)}; ${f1(r.ttftMs.p99)}`);
  row("added over direct p50; p99, ms", (r) => (direct && r !== direct ? `${f1(r.ttftMs.p50 - direct.ttftMs.p50)}; ${f1(r.ttftMs.p99 - direct.ttftMs.p99)}` : "–"));
  row("streams open at the plateau (median of samples)", (r) => String(r.openAtPlateau));
  row("RSS idle; plateau (median); peak, MiB", (r) => `${f1(r.idleRssMiB)}; ${f1(r.plateauRssMiB)}; ${f1(r.peakRssMiB)}`);
  row(`memory per open stream above idle, KiB (≤ ${STREAM_TARGETS.perStreamKiB})`, (r) => (r.target === "direct" ? `${f1(r.perStreamKiB)} (the mock)` : f1(r.perStreamKiB)));
  row(`event-loop delay p50; p99; max, ramp and plateau, ms (p99 ≤ ${STREAM_TARGETS.loopDelayP99Ms})`, (r) =>
    r.loopDelayMs ? `${f1(r.loopDelayMs.p50)}; ${f1(r.loopDelayMs.p99)}; ${f1(r.loopDelayMs.max)}` : "–",
  );
  row("event-loop delay p99; max, to the end (settlements), ms", (r) => (r.loopDelayToEndMs ? `${f1(r.loopDelayToEndMs.p99)}; ${f1(r.loopDelayToEndMs.max)}` : "–"));
  row("target CPU, s (per stream, ms)", (r) => (r.targetCpuSeconds === null ? "–" : `${f1(r.targetCpuSeconds)} (${((r.targetCpuSeconds * 1000) / r.opened).toFixed(2)})`));
  row("peak open fds", (r) => String(r.peakFds));
  row("clients' CPU, s; their loop p99, ms; the mock's loop p99, ms", (r) => `${f1(r.clientCpuSeconds)}; ${f1(r.clientLoopDelayP99Ms)}; ${f1(r.mockLoopDelayP99Ms)}`);
  row("wall, s", (r) => f1(r.wallSeconds));
  lines.push("");
  for (const run of result.runs) {
    if (run.target === "direct") continue;
    const v = judge(run);
    lines.push(`**${run.target}**: memory per stream ${v.perStream}; event-loop delay p99 ${v.loopDelay}; errors ${v.errors}; billed exactly once ${v.billedOnce}.`);
    if (run.books) lines.push(`Ledger: ${books(run)}.`);
    if (run.errors)
      lines.push(
        `Errors by kind: ${Object.entries(run.errorKinds)
          .map(([kind, n]) => `${kind} ${n}`)
          .join(", ")}.`,
      );
    if (run.errorSamples.length) lines.push(`First errors: ${run.errorSamples.map((e) => `\`${e.replaceAll("`", "'")}\``).join("; ")}.`);
    lines.push("");
  }
  const direct0 = direct?.errorSamples ?? [];
  if (direct0.length) lines.push(`Direct errors: ${direct0.join("; ")}.`, "");
  lines.push(
    "File limits (RLIMIT_NOFILE soft/hard) set by the bench with prlimit, not by the gateway: " +
      Object.entries(result.fileLimits)
        .map(([name, l]) => `${name} ${l.soft}/${l.hard}${l.shortfall ? ` (${l.shortfall})` : ""}`)
        .join(", ") +
      ".",
  );
  for (const s of result.skipped) lines.push("", `Skipped: ${s}.`);
  return lines.join("\n") + "\n";
}
