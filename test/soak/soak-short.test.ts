// The soak's short form (issue 43, item 5): three minutes of mixed traffic through the built
// `gateway serve --workers 2` on SQLite (bench/lib/soak/run.ts). Asserted: no unexpected outcome,
// every kind of traffic seen, no hold left after the drain, the ledger exact against the client's
// records, open fds flat within a small bound. The memory slope is reported, and asserted only
// loosely (under 100 MiB per 10 minutes): over three minutes it is dominated by noise (heaps
// growing to their working size, GC timing), so only a gross leak fails here; the 1 MiB per 10
// minutes target is for the 30-minute run (bench/soak.ts --minutes 30).
// SOAK_SECONDS shortens or lengthens it (at least 30).
import { describe, expect, it } from "vitest";
import { renderSoakMarkdown } from "../../bench/lib/soak/report.js";
import { runSoak } from "../../bench/lib/soak/run.js";
import { SOAK_KINDS } from "../../bench/lib/soak/traffic.js";

const SECONDS = Math.max(30, Number(process.env.SOAK_SECONDS ?? "180"));
const RATE = 10;
/**
 * Over two minutes after warm-up a heap still settling reads as a slope of tens of MiB per 10 minutes
 * either way (four runs: +26, −23, +7, +46); only a gross leak (over ~17 KiB a request at 10 req/s)
 * passes 100. Whether the slope is really flat is for the 30-minute run.
 */
const LOOSE_RSS_SLOPE_MIB_PER_10_MIN = 100;
/**
 * Open fds after warm-up, gateway and workers together: each request in flight holds up to two (its
 * client socket, its upstream socket), so the spread follows the concurrency at the sample instants,
 * which spikes on a loaded host (93–130 seen). A leak of one fd for each request of a single kind
 * (150 a run each of cancelled, failed upstream and failover) goes past it.
 */
const FD_SPREAD_BOUND = 64;

describe("soak, short form", () => {
  it(
    `${SECONDS} s of mixed traffic at ${RATE} req/s: no unexpected errors, no holds left, ledger exact, fds flat`,
    async () => {
      const lines: string[] = [];
      const result = await runSoak({
        seconds: SECONDS,
        rate: RATE,
        workers: 2,
        postgresAdminUrl: null,
        sampleEverySeconds: 3,
        warmUpSeconds: Math.round(SECONDS / 3),
        log: (line) => lines.push(line),
      });
      const report = renderSoakMarkdown(result);
      console.log(report);

      expect(result.unexpected, report).toEqual([]);
      expect(result.sent).toBe(SECONDS * RATE);
      for (const kind of SOAK_KINDS) expect(Object.keys(result.byKind[kind]).length, `${kind} never sent`).toBeGreaterThan(0);
      // The key revoked at half time answered before and was refused after.
      expect(result.byKind["revoked-key"].ok).toBeGreaterThan(0);
      expect(result.byKind["revoked-key"].failed).toBeGreaterThan(0);
      expect(result.byKind["upstream-error"].failed).toBeGreaterThan(0);
      expect(result.byKind.cancel.cancelled).toBeGreaterThan(0);
      expect(result.failoverAttempts).toBeGreaterThan(0);

      expect(result.books.holdsLeft).toBe(0);
      expect(result.books.accountHeldNano).toBe(0n);
      expect(result.books.mismatches).toEqual([]);
      expect(result.books.chargedFailures).toEqual([]);
      expect(result.books.duplicates).toEqual([]);
      expect(result.books.clientTotalNano).toBe(result.books.ledgerTotalForOkNano);
      expect(result.books.clientTotalNano > 0n).toBe(true);
      expect(result.books.balanceMatchesLedger).toBe(true);
      expect(result.books.exact).toBe(true);

      expect(result.trend.samples).toBeGreaterThanOrEqual(5);
      expect(result.trend.fdMax - result.trend.fdMin).toBeLessThanOrEqual(FD_SPREAD_BOUND);
      expect(result.trend.rssSlopeMiBPer10Min).toBeLessThan(LOOSE_RSS_SLOPE_MIB_PER_10_MIN);
    },
    (SECONDS + 150) * 1000,
  );
});
