// What the dashboard API answers about upstreams and the live catalog (types only; api.ts re-exports them).
export interface BreakerStatus {
  state: "closed" | "open" | "half_open";
  cooldown_seconds: number;
  requests: number;
  failures: number;
  error_rate: number | null;
  p50_ms: number | null;
  window_at: string | null;
  state_changed_at: string | null;
  /** The key's latest upstream error ("HTTP 503", "HTTP 429 (rate limited)", "no response: …") and when. */
  last_error: string | null;
  last_error_at: string | null;
  /** Seconds left of the key's cooldown after a 429. */
  rate_limit_cooldown_seconds: number;
}

export interface UpstreamKeyStatus extends BreakerStatus {
  provider: string;
  account_id: string | null;
  account_email: string | null;
  upstream_key_id: string | null;
  fingerprint: string;
}

export interface UpstreamStatuses {
  keys: UpstreamKeyStatus[];
  /** Routing groups' deployments: `deployment` is "<model>/<name>". */
  deployments: Array<BreakerStatus & { deployment: string; provider: string; probe: ProbeStatus | null }>;
}

/** A deployment's active health probe: its interval and last result (ok null: not probed yet). */
export interface ProbeStatus {
  interval_s: number;
  ok: boolean | null;
  status: number | null;
  latency_ms: number | null;
  error: string | null;
  checked_at: string | null;
  failures_in_row: number;
}

/** A catalog version's record (GET /admin/catalog/versions). */
export interface CatalogVersion {
  version: number;
  created_at: string;
  actor: string | null;
  reason: string;
}

/** The catalog document: the config file's providers (without keys), models and tiers sections. */
export interface CatalogDocument {
  demo?: boolean;
  providers: Record<string, Record<string, unknown>>;
  models: Array<Record<string, unknown>>;
  tiers: Record<string, Record<string, unknown>>;
  /** The live catalog's MCP servers; header and env values only as {"set": true, "last4"?}. */
  mcp_servers?: Record<string, Record<string, unknown>>;
}

/** A catalog provider's shared key, shown by its last four characters only. */
export interface CatalogProviderKey {
  id: string;
  provider: string;
  label: string;
  last4: string;
  status: "active" | "disabled";
  /** database: added here (pk_…); file: written in the config file (fk_…), only tested, enabled or disabled here. */
  source: "database" | "file";
  created_at: string | null;
}

/** POST /admin/catalog/provider-keys/{id}/test: one smallest request with that key, paid by the operator. */
export interface ProviderKeyTest {
  object: "provider_key.test";
  key_id: string;
  provider: string;
  model: string;
  request_id: string;
  ok: boolean;
  status: number | null;
  latency_ms: number;
  cost_nano: string;
  cost_usd: string;
  input_tokens: number;
  output_tokens: number;
  refused: boolean;
  disabled: boolean;
  error: string | null;
}

/** GET /admin/catalog: the catalog served now; version null when it comes from the config file. */
export interface LiveCatalog extends Partial<Omit<CatalogVersion, "version">> {
  object: "catalog";
  source: "file" | "database";
  read_only: boolean;
  version: number | null;
  document: CatalogDocument;
  provider_keys: CatalogProviderKey[];
}

export interface CatalogSectionDiff {
  added: Record<string, unknown>;
  removed: Record<string, unknown>;
  changed: Record<string, { before: unknown; after: unknown }>;
}

/** GET /admin/catalog/diff: what changed from version `from` to `to` (the catalog served now). */
export interface CatalogDiff {
  object: "catalog.diff";
  from: number;
  to: number | null;
  changes: {
    providers: CatalogSectionDiff;
    models: CatalogSectionDiff;
    tiers: CatalogSectionDiff;
    mcp_servers: CatalogSectionDiff;
    demo: { before: boolean | null; after: boolean | null } | null;
  };
}
