// The typed result of loading the config (GatewayConfig and its parts) and the error a config that
// cannot be used raises. load.ts builds it; the rest of the gateway reads it (and re-imports these
// names from load.ts).
import type { McpSettings } from "./mcp-settings.js";
import type { OidcSettings } from "./oidc-settings.js";
import type { GuardrailSettings } from "../core/guardrails/guardrail.js";
import type { StripeSettings } from "./stripe-settings.js";
import type { CacheSettings } from "./cache-settings.js";
import type { ConfigFile } from "./schema.js";
import type { ModelConfig, ProviderConfig } from "../core/catalog.js";
import type { BreakerSettings } from "../upstreams/circuit-breaker.js";
import type { TrustedProxies } from "../core/trusted-proxies.js";
import type { TierLimits } from "../core/traffic-limits.js";
import type { MetricsSettings } from "../observability/metrics.js";
import type { TracingSettings } from "../observability/settings.js";
import type { RequestLogSettings } from "../requestlog/settings.js";
import type { DatabaseTimeouts } from "../store/database-timeouts.js";

export interface GatewayConfig {
  /** The config file read, or null when the gateway runs with an empty catalog. */
  sourcePath: string | null;
  /**
   * The config's version: the SHA-256 (hex) of the file's bytes as read (of nothing without a file),
   * as `sha256sum` prints it; with the catalog in the database, followed by `+catalog.<head serial>`.
   */
  version: string;
  /** The file's SHA-256 alone. */
  fileVersion: string;
  /** The validated file: what a catalog version from the database is combined with. */
  file: ConfigFile;
  /** catalog.source: where providers, models and tiers come from. */
  catalogSource: "file" | "database";
  /** The catalog version served (catalog.source: database); null for a catalog from the file. */
  catalogVersion: number | null;
  /**
   * The settings a reload cannot change (the listener, the database, the secret, the metrics and
   * breaker machinery are built once at start), each as a comparable text keyed by its config name.
   * A reload whose file changes one of them is refused: "needs a restart" (decision 0021).
   */
  restartOnlySettings: Readonly<Record<string, string>>;
  host: string;
  port: number;
  databaseUrl: string | null;
  /** DATABASE_CONNECT_TIMEOUT_MS and DATABASE_QUERY_TIMEOUT_MS (PostgreSQL); absent: the store's defaults. */
  databaseTimeouts?: DatabaseTimeouts;
  dataDir: string;
  sqlitePath: string;
  secret: string | null;
  /** GATEWAY_LEDGER_SECRET: the key of the ledger's hash chain is derived from it (ADR 0032); null: none. */
  ledgerSecret: string | null;
  logLevel: string;
  /** GATEWAY_BALANCE_ESCROW=1: on PostgreSQL, admit from per-process slices of account balances (ADR 0048); absent: off. */
  balanceEscrow?: boolean;
  bodyLimitBytes: number;
  connections: ConnectionLimits;
  /** server.signup (docs/dashboard.md, "Signing in"): who may create an account on the sign-in page. */
  signup: SignupMode;
  /** The `oidc` section: company sign-in to the dashboard; null: none. */
  oidc: OidcSettings | null;
  /** The `stripe` section: card top-ups; null: off. */
  stripe: StripeSettings | null;
  /** The `mcp` section: the MCP servers behind /mcp (an empty list: none). */
  mcp: McpSettings;
  /** server.password_link_ttl_hours in ms: how long a set-password link works. */
  passwordLinkTtlMs: number;
  defaultTier: string;
  /** server.public_url without a trailing slash; null: the dashboard uses the address the browser shows. */
  publicUrl: string | null;
  providers: ReadonlyMap<string, ProviderConfig>;
  models: ReadonlyMap<string, ModelConfig>;
  tiers: ReadonlyMap<string, ReadonlySet<string>>;
  /** tiers.<tier>.limits: each tier's default rate and concurrency limits (a tier without them: none). */
  tierLimits: ReadonlyMap<string, TierLimits>;
  /** tiers.<tier>.price_factor in millionths (src/core/price-factor.ts); a tier without one is absent (pays list prices). */
  tierPriceFactors: ReadonlyMap<string, number>;
  /** server.trusted_proxies: the only peers whose X-Forwarded-* headers count. */
  trustedProxies: TrustedProxies;
  /** The config file's `media` section as written; src/config/media-settings.ts fills in defaults. */
  media: ConfigFile["media"];
  /** The `upstream_health` section: every upstream key's circuit breaker. */
  upstreamHealth: BreakerSettings;
  /** The `billing` section. */
  billing: BillingSettings;
  /** The `alerts` section. */
  alerts: AlertSettings;
  /** ledger_verify.interval_s in ms; 0: the scheduled verify is off. */
  ledgerVerifyIntervalMs: number;
  /** The `guardrails` list, compiled (and billing.charge_blocked_answers). */
  guardrails: GuardrailSettings;
  /** The `request_log` section; null when request_log.enabled is false. */
  requestLog: RequestLogSettings | null;
  /** The `cache` section and REDIS_URL: the response cache (ADR 0044). */
  cache: CacheSettings;
  /** The `metrics` section (GET /metrics); null: no metrics are served or recorded. */
  metrics: MetricsSettings | null;
  /** Traces from the OTEL_* environment variables; null (the default): no tracing at all. */
  tracing: TracingSettings | null;
}

export interface AlertSettings {
  allowedHttpHosts: readonly string[];
  attemptTimeoutMs: number;
  maxAttempts: number;
  backoffMs: number;
  pollMs: number;
  reports: boolean;
}

export type SignupMode = "open" | "invite" | "closed";

export interface BillingSettings {
  /** billing.clamp.min_output_tokens: the fewest output tokens a clamped request is admitted with. */
  clampMinOutputTokens: number;
}

/** How long a client may take to send a request, how long an idle connection stays, how many at once. */
export interface ConnectionLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
}

/** One thing wrong with a config file or a catalog document: where, and what. */
export interface ConfigIssue {
  /** The field's path, as `models[2].pricing.input_per_mtok`; "" for the whole document. */
  field: string;
  message: string;
}

/** A config or catalog that cannot be used: every issue found, each with its field path. */
export class ConfigError extends Error {
  override name = "ConfigError";
  constructor(
    message: string,
    /** Every issue; one made from a message alone has none listed. */
    readonly issues: ConfigIssue[] = [],
  ) {
    super(message);
  }

  /** "SOURCE: field: message" per issue, one per line (what a one-issue error always said). */
  static of(source: string, issues: ConfigIssue[]): ConfigError {
    return new ConfigError(issues.map((issue) => `${source}: ${issue.field || "(top level)"}: ${issue.message}`).join("\n"), issues);
  }
}

/** zod's issues as config issues, with paths written the way the file is. */
export function issuesOf(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): ConfigIssue[] {
  return issues.map((issue) => ({ field: formatPath(issue.path), message: issue.message }));
}

export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  return path.map((part, i) => (typeof part === "number" ? `[${part}]` : `${i ? "." : ""}${String(part)}`)).join("");
}
