// Scheduled work of the whole gateway (ADR 0040), each job in the one process holding its lease
// (store/leases-store.ts, as the health probes): `ledger verify` every ledger_verify.interval_s (its
// result in scheduled_runs, read by the metrics, and a ledger.verify_failed alert when it fails), and
// the daily and weekly spend reports (once per period: the period is recorded in scheduled_runs, and
// each report's dedup key names its subject and period).
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "pino";
import type { GatewayConfig } from "../../config/load.js";
import type { Store } from "../../store/index.js";
import { lastPeriod, reportSubjects, spendReport, type ReportPeriod } from "./spend-report.js";

export const LEDGER_VERIFY_JOB = "ledger_verify";
export const SPEND_REPORTS_JOB = "spend_reports";
const TICK_MS = 1_000;
const LEASE_MS = 15_000;

export interface LedgerVerifyOutcome {
  ok: boolean;
  differences: number;
  summary: string;
}

/** The chains and every stored figure, as `gateway admin ledger verify` checks them. */
export async function runLedgerVerify(store: Store): Promise<LedgerVerifyOutcome> {
  const chain = await store.ledger.verify();
  const figures = await store.ledger.recompute();
  const problems: string[] = [];
  if (chain.broken) problems.push(`chain broken at ${chain.broken.where} ${String(chain.broken.rowId)} of account ${chain.broken.accountId}`);
  if (chain.keyed?.problem) problems.push(`keyed chain: ${chain.keyed.problem}`);
  if (figures.differences.length > 0) problems.push(`${figures.differences.length}${figures.truncated ? "+" : ""} stored figures differ from the ledger`);
  const differences = figures.differences.length + (chain.broken ? 1 : 0) + (chain.keyed?.problem ? 1 : 0);
  return { ok: problems.length === 0, differences, summary: problems.length === 0 ? `${chain.rows} rows checked` : problems.join("; ") };
}

export interface ScheduledJobsDeps {
  store: Store;
  logger: Logger;
  config(): GatewayConfig;
  clock?: () => number;
  tickMs?: number;
}

export class ScheduledJobs {
  readonly holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> | null = null;
  readonly #held = new Set<string>();

  constructor(private readonly deps: ScheduledJobsDeps) {}

  start(): void {
    this.#timer = setInterval(() => void this.tick(), this.deps.tickMs ?? TICK_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#ticking;
    for (const job of this.#held) await this.deps.store.leases.release(job, this.holder).catch(() => undefined);
    this.#held.clear();
  }

  tick(): Promise<void> {
    this.#ticking ??= this.#tick()
      .catch((err: unknown) => this.deps.logger.warn({ err }, "scheduled jobs failed"))
      .finally(() => {
        this.#ticking = null;
      });
    return this.#ticking;
  }

  async #tick(): Promise<void> {
    const config = this.deps.config();
    if (config.ledgerVerifyIntervalMs > 0 && (await this.#lease(LEDGER_VERIFY_JOB))) await this.#verifyIfDue(config.ledgerVerifyIntervalMs);
    if (config.alerts.reports && (await this.#lease(SPEND_REPORTS_JOB))) {
      for (const period of ["daily", "weekly"] as const) await this.#reportIfDue(period);
    }
  }

  async #lease(job: string): Promise<boolean> {
    const now = this.#now();
    const held = await this.deps.store.leases.acquire(job, this.holder, now, now + LEASE_MS);
    if (held) this.#held.add(job);
    else this.#held.delete(job);
    return held;
  }

  #now(): number {
    return (this.deps.clock ?? Date.now)();
  }

  async #lastRun(job: string) {
    return this.deps.store.db.selectFrom("scheduled_runs").selectAll().where("name", "=", job).executeTakeFirst();
  }

  async #recordRun(job: string, values: { last_started_at?: bigint; last_finished_at?: bigint; last_ok?: number | null; last_detail?: string | null }): Promise<void> {
    await this.deps.store.db
      .insertInto("scheduled_runs")
      .values({ name: job, last_started_at: 0n, last_finished_at: 0n, last_ok: null, last_detail: null, ...values })
      .onConflict((oc) => oc.column("name").doUpdateSet(values))
      .execute();
  }

  async #verifyIfDue(intervalMs: number): Promise<void> {
    const started = this.#now();
    const last = await this.#lastRun(LEDGER_VERIFY_JOB);
    if (last && Number(last.last_started_at) + intervalMs > started) return;
    await this.#recordRun(LEDGER_VERIFY_JOB, { last_started_at: BigInt(started) });
    const outcome = await runLedgerVerify(this.deps.store);
    await this.#recordRun(LEDGER_VERIFY_JOB, {
      last_finished_at: BigInt(this.#now()),
      last_ok: outcome.ok ? 1 : 0,
      last_detail: JSON.stringify({ differences: outcome.differences, summary: outcome.summary }),
    });
    if (outcome.ok) return;
    this.deps.logger.error({ differences: outcome.differences, summary: outcome.summary }, "scheduled ledger verify failed");
    await this.deps.store.alerts.record(
      {
        type: "ledger.verify_failed",
        dedupKey: `ledger.verify_failed:${started}`,
        data: { started_at: new Date(started).toISOString(), differences: outcome.differences, summary: outcome.summary },
      },
      this.#now(),
    );
  }

  async #reportIfDue(period: ReportPeriod): Promise<void> {
    const job = `report.${period}`;
    const window = lastPeriod(period, this.#now());
    const label = new Date(window.from).toISOString().slice(0, 10);
    const last = await this.#lastRun(job);
    if (last?.last_detail === label) return;
    await this.#recordRun(job, { last_started_at: BigInt(this.#now()) });
    if (await this.deps.store.alerts.anyEnabled()) {
      for (const subject of await reportSubjects(this.deps.store, window)) {
        const report = await spendReport(this.deps.store, subject, period, window);
        await this.deps.store.alerts.record({
          type: period === "daily" ? "report.daily" : "report.weekly",
          dedupKey: `report.${period}:${label}:${subject.kind}:${subject.id}`,
          accountId: subject.kind === "account" ? subject.id : null,
          workspaceId: subject.kind === "workspace" ? subject.id : null,
          data: { ...report },
        });
      }
    }
    await this.#recordRun(job, { last_finished_at: BigInt(this.#now()), last_ok: 1, last_detail: label });
  }
}
