// The scheduled ledger verify's gauges (docs/operations.md, "Scheduled ledger verify"): read from its
// last recorded run (scheduled_runs), the same in every process, so taken once across workers.
import { Gauge, type Registry } from "prom-client";

export interface LedgerVerifyRun {
  /** Epoch ms the last run finished; 0: none yet. */
  finishedAt: number;
  ok: boolean | null;
  differences: number;
}

export function registerLedgerVerifyMetrics(registry: Registry, lastRun: () => Promise<LedgerVerifyRun | null>): void {
  const registers = [registry];
  new Gauge({
    name: "gateway_ledger_verify_last_run_timestamp_seconds",
    help: "When the last scheduled ledger verify finished (Unix seconds; 0: none yet).",
    registers,
    aggregator: "first",
    async collect() {
      this.set(((await lastRun())?.finishedAt ?? 0) / 1000);
    },
  });
  new Gauge({
    name: "gateway_ledger_verify_last_ok",
    help: "1 when the last scheduled ledger verify found the ledger and every figure consistent, 0 when it failed, -1 before the first run.",
    registers,
    aggregator: "first",
    async collect() {
      const ok = (await lastRun())?.ok ?? null;
      this.set(ok === null ? -1 : ok ? 1 : 0);
    },
  });
  new Gauge({
    name: "gateway_ledger_verify_differences",
    help: "Broken links and stored figures that differed from the ledger in the last scheduled ledger verify.",
    registers,
    aggregator: "first",
    async collect() {
      this.set((await lastRun())?.differences ?? 0);
    },
  });
}
