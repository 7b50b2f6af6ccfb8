// `gateway admin upstreams status`: every upstream key's circuit breaker as the gateway processes
// last wrote it to upstream_health, then every routing-group deployment's. Keys are named by
// fingerprint (and last four characters for an account's own keys, as provider-keys list shows
// them), never by the key; deployments by "<model>/<name>".
import type { GatewayConfig } from "../../config/load.js";
import type { Store } from "../../store/index.js";
import type { UpstreamHealthRow } from "../../store/upstream-health-store.js";
import { keyFingerprint, keyScope } from "../../upstreams/health/upstream-health.js";
import { emit, parseCommand, table, UsageError, type CliIo } from "../io.js";

interface KeyStatus {
  provider: string;
  /** null for the provider's shared keys from the config. */
  account_id: string | null;
  upstream_key_id: string | null;
  /** null for a deployment's row. */
  fingerprint: string | null;
  /** "<model>/<name>" for a routing group's deployment; null for a key. */
  deployment: string | null;
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
}

export async function upstreamsCommand(sub: string | undefined, args: string[], io: CliIo, store: Store, config: GatewayConfig): Promise<void> {
  if (sub !== "status") throw new UsageError("usage: gateway admin upstreams status [--json]");
  const { json } = parseCommand(args, {}, []);
  const rows = new Map((await store.upstreamHealth.all()).map((row) => [row.scope, row]));
  const now = Date.now();
  const shared = [...config.providers.values()].flatMap((p) =>
    p.sharedKeys.map((key) => ({ provider: p.name, accountId: null, id: null, fingerprint: keyFingerprint(p.name, key) })),
  );
  const own = await store.upstreamKeys.listAllFingerprinted(keyFingerprint);
  const keys = [...shared, ...own].map((k) => describe({ ...k, deployment: null }, rows.get(keyScope(k.fingerprint)), now));
  const deployments = [...config.models.values()].flatMap((model) =>
    (model.group?.deployments ?? []).map((d) =>
      describe({ provider: d.model.provider.name, accountId: null, id: null, fingerprint: null, deployment: `${model.id}/${d.name}` }, rows.get(d.breakerScope), now),
    ),
  );
  const statuses = [...keys, ...deployments];
  emit(io, json, statuses, () =>
    table(
      statuses.map((s) => ({
        provider: s.provider,
        owner: s.account_id ?? "shared",
        key: s.fingerprint ?? `deployment ${s.deployment}`,
        state: s.state,
        cooldown_s: s.cooldown_seconds,
        errors: s.error_rate === null ? null : `${Math.round(s.error_rate * 100)}% of ${s.requests}`,
        p50_ms: s.p50_ms,
      })),
    ),
  );
}

interface Scope {
  provider: string;
  accountId: string | null;
  id: string | null;
  fingerprint: string | null;
  deployment: string | null;
}

function describe(key: Scope, row: UpstreamHealthRow | undefined, now: number): KeyStatus {
  const open = row?.state === "open";
  const iso = (ms: number | undefined) => (ms ? new Date(ms).toISOString() : null);
  return {
    provider: key.provider,
    account_id: key.accountId,
    upstream_key_id: key.id,
    fingerprint: key.fingerprint,
    deployment: key.deployment,
    state: !open ? "closed" : row.openedUntil > now ? "open" : "half_open",
    cooldown_seconds: open ? Math.max(0, Math.ceil((row.openedUntil - now) / 1000)) : 0,
    requests: row?.requests ?? 0,
    failures: row?.failures ?? 0,
    error_rate: row && row.requests > 0 ? row.failures / row.requests : null,
    p50_ms: row?.p50Ms ?? null,
    window_at: iso(row?.statsAt),
    state_changed_at: iso(row?.changedAt),
  };
}
