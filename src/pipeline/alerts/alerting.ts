// Alerts in one gateway process (ADR 0040): the dispatcher, the threshold watcher behind settlement,
// the scheduled jobs, and the breaker hook. app.ts builds it once; nothing here is on the request path
// but ThresholdWatcher.notice, which queues.
import type { Logger } from "pino";
import type { Billing } from "../../billing/types.js";
import type { GatewayConfig } from "../../config/load.js";
import type { Store } from "../../store/index.js";
import type { UpstreamHealth } from "../../upstreams/upstream-health.js";
import { AlertDispatcher } from "./dispatcher.js";
import { LEDGER_VERIFY_JOB, ScheduledJobs } from "./scheduled-jobs.js";
import { ThresholdWatcher } from "./thresholds.js";
import type { LedgerVerifyRun } from "../../observability/ledger-verify-metrics.js";

export interface Alerting {
  dispatcher: AlertDispatcher;
  watcher: ThresholdWatcher;
  jobs: ScheduledJobs;
  /** `billing` whose settlements are followed by a threshold check (queued, not awaited). */
  watched(billing: Billing): Billing;
  stop(): Promise<void>;
}

export async function startAlerting(deps: { store: Store; logger: Logger; config(): GatewayConfig; health: UpstreamHealth; clock: () => number }): Promise<Alerting> {
  const { store, logger, clock } = deps;
  const dispatcher = new AlertDispatcher({ alerts: store.alerts, logger, settings: () => deps.config().alerts, clock });
  const watcher = new ThresholdWatcher(store, logger, clock);
  await watcher.refreshActive();
  const jobs = new ScheduledJobs({ store, logger, config: () => deps.config(), clock });
  deps.health.onOpened = (scope, openedUntil) => {
    // One event per opening across processes: the window it opened in names it.
    const window = Math.floor(openedUntil / Math.max(1, deps.health.settings.openMs));
    void store.alerts
      .record({ type: "upstream.breaker_open", dedupKey: `breaker:${scope}:${window}`, data: { scope, opened_until: new Date(openedUntil).toISOString() } }, clock())
      .catch((err: unknown) => logger.warn({ err, scope }, "recording the breaker alert failed"));
  };
  dispatcher.start();
  jobs.start();
  return {
    dispatcher,
    watcher,
    jobs,
    watched: (billing) => ({
      admit: (request, options) => billing.admit(request, options),
      release: (hold) => billing.release(hold),
      settle: async (hold, usage, provider, flatCost) => {
        const charge = await billing.settle(hold, usage, provider, flatCost);
        watcher.notice(hold);
        return charge;
      },
    }),
    async stop() {
      deps.health.onOpened = null;
      await jobs.stop();
      await watcher.stop();
      await dispatcher.stop();
    },
  };
}

/** The scheduled verify's last run as the metrics read it. */
export async function lastLedgerVerify(store: Store): Promise<LedgerVerifyRun | null> {
  const row = await store.db.selectFrom("scheduled_runs").selectAll().where("name", "=", LEDGER_VERIFY_JOB).executeTakeFirst();
  if (!row || row.last_ok === null) return null;
  const detail = JSON.parse(row.last_detail ?? "{}") as { differences?: number };
  return { finishedAt: Number(row.last_finished_at), ok: Number(row.last_ok) === 1, differences: detail.differences ?? 0 };
}
