// What `gateway admin upstreams status --json` prints and GET /dashboard/api/admin/upstreams answers:
// every upstream key's circuit breaker as the gateway processes last wrote it to upstream_health.
// Keys are named by provider and fingerprint (own keys also by their upk_ id and owning account),
// never by the key. Routing groups' deployments are a second list with the same breaker fields and
// each one's active health probe (its interval and last result) when it has one.
import type { GatewayConfig } from "../config/load.js";
import type { Store } from "../store/index.js";
import type { UpstreamHealthRow } from "../store/upstream-health-store.js";
import { keyFingerprint, keyScope } from "../upstreams/upstream-health.js";

/** One breaker as last written: its state and the window behind it. */
export interface BreakerStatus {
  state: "closed" | "open" | "half_open";
  /** Seconds until an open breaker lets a trial request through; 0 otherwise. */
  cooldown_seconds: number;
  /** The window last written by a gateway process: its requests, failures, failure ratio and median latency. */
  requests: number;
  failures: number;
  error_rate: number | null;
  p50_ms: number | null;
  window_at: string | null;
  state_changed_at: string | null;
  /** The latest upstream error seen on this key ("HTTP 503", "HTTP 429 (rate limited)", "no response: …") and when. */
  last_error: string | null;
  last_error_at: string | null;
  /** Seconds left of the key's cooldown after a 429 (the process that saw the 429); 0 otherwise. */
  rate_limit_cooldown_seconds: number;
}

export interface KeyStatus extends BreakerStatus {
  provider: string;
  /** null for the provider's shared keys from the config. */
  account_id: string | null;
  account_email: string | null;
  upstream_key_id: string | null;
  fingerprint: string;
}

/** A routing group's deployment's breaker. */
export interface DeploymentStatus extends BreakerStatus {
  /** "<model>/<name>". */
  deployment: string;
  provider: string;
  /** Its active health probe (health_check in the config); null without one. */
  probe: ProbeStatus | null;
}

/** A deployment's health_check and its last probe (ok null: not probed yet). */
export interface ProbeStatus {
  interval_s: number;
  ok: boolean | null;
  status: number | null;
  latency_ms: number | null;
  error: string | null;
  checked_at: string | null;
  failures_in_row: number;
}

export interface UpstreamStatuses {
  keys: KeyStatus[];
  deployments: DeploymentStatus[];
}

export async function upstreamStatuses(store: Store, config: GatewayConfig, now = Date.now()): Promise<UpstreamStatuses> {
  const rows = new Map((await store.upstreamHealth.all()).map((row) => [row.scope, row]));
  const shared = [...config.providers.values()].flatMap((p) =>
    p.sharedKeys.map((key) => ({ provider: p.name, account_id: null, account_email: null, upstream_key_id: null, fingerprint: keyFingerprint(p.name, key) })),
  );
  const own = (await store.upstreamKeys.listAllFingerprinted(keyFingerprint)).map((k) => ({
    provider: k.provider,
    account_id: k.accountId,
    account_email: k.accountEmail,
    upstream_key_id: k.id,
    fingerprint: k.fingerprint,
  }));
  const keys = [...shared, ...own].map((key) => ({ ...key, ...describeBreaker(rows.get(keyScope(key.fingerprint)), now) }));
  const probes = new Map((await store.healthProbes.all()).map((r) => [r.scope, r]));
  const deployments = [...config.models.values()].flatMap((model) =>
    (model.group?.deployments ?? []).map((d) => {
      const last = probes.get(d.breakerScope);
      const probe: ProbeStatus | null = d.healthCheck
        ? {
            interval_s: d.healthCheck.intervalMs / 1000,
            ok: last?.ok ?? null,
            status: last?.status ?? null,
            latency_ms: last ? last.latencyMs : null,
            error: last?.error ?? null,
            checked_at: last ? new Date(last.checkedAt).toISOString() : null,
            failures_in_row: last?.failuresInRow ?? 0,
          }
        : null;
      return { deployment: `${model.id}/${d.name}`, provider: d.model.provider.name, ...describeBreaker(rows.get(d.breakerScope), now), probe };
    }),
  );
  return { keys, deployments };
}

/** A scope's row as the status shows it; no row is a closed breaker that has seen no traffic. */
export function describeBreaker(row: UpstreamHealthRow | undefined, now: number): BreakerStatus {
  const open = row?.state === "open";
  const iso = (ms: number | undefined) => (ms ? new Date(ms).toISOString() : null);
  return {
    state: !open ? "closed" : row.openedUntil > now ? "open" : "half_open",
    cooldown_seconds: open ? Math.max(0, Math.ceil((row.openedUntil - now) / 1000)) : 0,
    requests: row?.requests ?? 0,
    failures: row?.failures ?? 0,
    error_rate: row && row.requests > 0 ? row.failures / row.requests : null,
    p50_ms: row?.p50Ms ?? null,
    window_at: iso(row?.statsAt),
    state_changed_at: iso(row?.changedAt),
    last_error: row?.lastError ?? null,
    last_error_at: iso(row?.lastErrorAt),
    rate_limit_cooldown_seconds: row && row.cooldownUntil > now ? Math.ceil((row.cooldownUntil - now) / 1000) : 0,
  };
}
