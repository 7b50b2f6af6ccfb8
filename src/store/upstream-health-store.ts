// The shared state of circuit breakers (migration 0006): written off the request path by the process
// whose breaker changed, polled by every process, read by `gateway admin upstreams status`.
import type { Kysely } from "kysely";
import type { Database } from "./tables.js";

export interface BreakerRow {
  scope: string;
  state: "open" | "closed";
  openedUntil: number;
  changedAt: number;
}

export interface BreakerWindowRow {
  requests: number;
  failures: number;
  p50Ms: number | null;
  statsAt: number;
}

/** A key's latest upstream error and 429 cooldown, as the process that saw them last wrote them. */
export interface UpstreamErrorRow {
  lastError: string | null;
  lastErrorAt: number;
  cooldownUntil: number;
}

export type UpstreamHealthRow = BreakerRow & BreakerWindowRow & UpstreamErrorRow;

export class UpstreamHealthStore {
  constructor(private readonly db: Kysely<Database>) {}

  async writeState(row: BreakerRow): Promise<void> {
    const values = { state: row.state, opened_until: BigInt(row.openedUntil), changed_at: BigInt(row.changedAt) };
    await this.db
      .insertInto("upstream_health")
      .values({ scope: row.scope, ...values })
      .onConflict((oc) => oc.column("scope").doUpdateSet(values))
      .execute();
  }

  /** The scope's window; with `error`, also its latest error and cooldown end (kept otherwise). */
  async writeWindow(scope: string, window: BreakerWindowRow, error?: UpstreamErrorRow): Promise<void> {
    const values = {
      requests: BigInt(window.requests),
      failures: BigInt(window.failures),
      p50_ms: window.p50Ms === null ? null : BigInt(window.p50Ms),
      stats_at: BigInt(window.statsAt),
      ...(error && { last_error: error.lastError, last_error_at: BigInt(error.lastErrorAt), cooldown_until: BigInt(error.cooldownUntil) }),
    };
    await this.db
      .insertInto("upstream_health")
      .values({ scope, state: "closed", ...values })
      .onConflict((oc) => oc.column("scope").doUpdateSet(values))
      .execute();
  }

  /** State changes at or after `since` (epoch ms, the writers' clocks). */
  async changedSince(since: number): Promise<BreakerRow[]> {
    const rows = await this.db
      .selectFrom("upstream_health")
      .select(["scope", "state", "opened_until", "changed_at"])
      .where("changed_at", ">=", BigInt(Math.max(0, since)))
      .where("changed_at", ">", 0n)
      .execute();
    return rows.map((r) => ({ scope: r.scope, state: r.state, openedUntil: Number(r.opened_until), changedAt: Number(r.changed_at) }));
  }

  async all(): Promise<UpstreamHealthRow[]> {
    const rows = await this.db.selectFrom("upstream_health").selectAll().execute();
    return rows.map((r) => ({
      scope: r.scope,
      state: r.state,
      openedUntil: Number(r.opened_until),
      changedAt: Number(r.changed_at),
      requests: Number(r.requests),
      failures: Number(r.failures),
      p50Ms: r.p50_ms === null ? null : Number(r.p50_ms),
      statsAt: Number(r.stats_at),
      lastError: r.last_error,
      lastErrorAt: Number(r.last_error_at),
      cooldownUntil: Number(r.cooldown_until),
    }));
  }
}
