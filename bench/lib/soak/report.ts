// The soak's report: the figures and the verdicts as Markdown (bench/results/history/…-soak*.md).
import { formatUsd } from "../../../src/core/money.js";
import type { SoakResult } from "./run.js";

/** The full soak's targets (issue 43): RSS after warm-up under 1 MiB per 10 minutes, fds flat. */
export const RSS_SLOPE_TARGET_MIB_PER_10_MIN = 1;

export function renderSoakMarkdown(result: SoakResult): string {
  const { options, trend, books } = result;
  const kinds = Object.entries(result.byKind)
    .map(
      ([kind, counts]) =>
        `| ${kind} | ${
          Object.entries(counts)
            .map(([k, n]) => `${k} ${n}`)
            .join(", ") || "—"
        } |`,
    )
    .join("\n");
  const verdict = trend.rssSlopeMiBPer10Min < RSS_SLOPE_TARGET_MIB_PER_10_MIN ? "met" : "missed";
  return `# Soak, ${result.database}, ${options.seconds} s at ${options.rate} req/s, ${options.workers} worker(s)

Started ${result.startedAt}; ${result.sent} requests in ${result.wallSeconds.toFixed(1)} s (drain included).
Samples every ${options.sampleEverySeconds} s; the trend is fitted after a ${options.warmUpSeconds} s warm-up (${trend.samples} samples).

| figure | value |
|---|---|
| RSS slope (gateway and workers), MiB per 10 min | ${trend.rssSlopeMiBPer10Min.toFixed(2)} (target < ${RSS_SLOPE_TARGET_MIB_PER_10_MIN}: ${verdict}${options.seconds < 1200 ? "; a short run: noise-dominated" : ""}) |
| RSS min–max after warm-up, MiB | ${trend.rssMinMiB.toFixed(1)}–${trend.rssMaxMiB.toFixed(1)} |
| open fds slope per 10 min; min–max (most requests in flight at a sample) | ${trend.fdSlopePer10Min.toFixed(2)}; ${trend.fdMin}–${trend.fdMax} (${trend.inFlightMax}) |
| unexpected outcomes | ${result.unexpected.length} |
| holds left after the drain | ${books.holdsLeft} (cleared ${books.holdsClearedAfterMs} ms after the drain) |
| ledger exact for successful requests | ${books.exact ? "yes" : "NO"}: ${books.okRequests} requests, client ${formatUsd(books.clientTotalNano)} = ledger ${formatUsd(books.ledgerTotalForOkNano)} USD |
| failed requests charged; duplicate rows | ${books.chargedFailures.length}; ${books.duplicates.length} |
| cancelled streams; of them charged (what was delivered) | ${books.cancelled}; ${books.cancelledCharged} |
| failover requests that took more than one attempt | ${result.failoverAttempts} |

| kind | outcomes |
|---|---|
${kinds}
${
  result.unexpected.length
    ? `\nFirst unexpected outcomes:\n\n${result.unexpected
        .slice(0, 10)
        .map((o) => `- ${o.kind} ${o.status} ${o.requestId ?? ""}: ${o.detail ?? ""}`)
        .join("\n")}\n`
    : ""
}`;
}
