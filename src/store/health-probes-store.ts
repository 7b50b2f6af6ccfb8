// Each probed deployment's last active health probe (health_probe_results, migration 0027): written
// by the one process probing (pipeline/health-probes.ts), read by the Upstreams page and the status
// command, and by a process that takes over the probes, to know which are due.
import type { Kysely } from "kysely";
import type { Database } from "./tables.js";

export interface ProbeResult {
  /** The deployment's breaker scope, "deployment:<model>/<name>". */
  scope: string;
  provider: string;
  model: string;
  ok: boolean;
  /** The upstream's HTTP status; null when it gave no response. */
  status: number | null;
  latencyMs: number;
  /** Why it failed, in the gateway's words. */
  error: string | null;
  checkedAt: number;
  /** Failed probes in a row up to this one (0 after a passing one). */
  failuresInRow: number;
}

export class HealthProbesStore {
  constructor(private readonly db: Kysely<Database>) {}

  async record(result: ProbeResult): Promise<void> {
    const values = {
      provider: result.provider,
      model: result.model,
      ok: result.ok ? 1 : 0,
      status: result.status,
      latency_ms: BigInt(result.latencyMs),
      error: result.error === null ? null : result.error.slice(0, 200),
      checked_at: BigInt(result.checkedAt),
      failures_in_row: result.failuresInRow,
    };
    await this.db
      .insertInto("health_probe_results")
      .values({ scope: result.scope, ...values })
      .onConflict((oc) => oc.column("scope").doUpdateSet(values))
      .execute();
  }

  async all(): Promise<ProbeResult[]> {
    const rows = await this.db.selectFrom("health_probe_results").selectAll().orderBy("scope").execute();
    return rows.map((r) => ({
      scope: r.scope,
      provider: r.provider,
      model: r.model,
      ok: Number(r.ok) === 1,
      status: r.status === null ? null : Number(r.status),
      latencyMs: Number(r.latency_ms),
      error: r.error,
      checkedAt: Number(r.checked_at),
      failuresInRow: Number(r.failures_in_row),
    }));
  }
}
