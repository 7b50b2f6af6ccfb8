// The only reader of environment variables and of the config file. Everything is parsed and
// validated at start and again on a reload (decision 0021); the request path reads the typed
// result, never the file.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import { parseUsd, type Nano } from "../core/money.js";
import { parseProxyRange, TrustedProxies } from "../http/trusted-proxies.js";
import { DIMENSIONS, TOKEN_DIMENSIONS, type DimensionPriceField } from "../billing/dimensions.js";
import type { ModelConfig, ModelKind, ModelPricing, ProviderConfig, ProviderSetting, TokenPrices } from "./catalog.js";
import type { BreakerSettings } from "../upstreams/health/circuit-breaker.js";
import { upstreams } from "../upstreams/registry.js";
import { DEMO_PROVIDER, demoModels, demoProvider } from "../upstreams/demo/catalog.js";
import { baseProviderOf, buildRoutingGroup, type GroupContext } from "./routing-groups.js";
import { configFileSchema, type ConfigFile, type ModelFileEntry } from "./schema.js";
import { tierLimitsOf, type TierLimits } from "../billing/traffic-limits.js";
import type { MetricsSettings } from "../observability/metrics.js";
import { metricsSettingsFrom, tracingSettingsFromEnv, type TracingSettings } from "../observability/settings.js";
import type { RequestLogSettings } from "../requestlog/settings.js";

export type { ModelConfig, ModelKind, ModelPricing, ProviderConfig, ProviderType, UpstreamApi } from "./catalog.js";

export interface GatewayConfig {
  /** The config file read, or null when the gateway runs with an empty catalog. */
  sourcePath: string | null;
  /** The config's version: the SHA-256 (hex) of the file's bytes as read (of nothing without a file), as `sha256sum` prints it. */
  version: string;
  /**
   * The settings a reload cannot change (the listener, the database, the secret, the metrics and
   * breaker machinery are built once at start), each as a comparable text keyed by its config name.
   * A reload whose file changes one of them is refused: "needs a restart" (decision 0021).
   */
  restartOnlySettings: Readonly<Record<string, string>>;
  host: string;
  port: number;
  databaseUrl: string | null;
  dataDir: string;
  sqlitePath: string;
  secret: string | null;
  logLevel: string;
  bodyLimitBytes: number;
  connections: ConnectionLimits;
  signup: "open" | "invite_only";
  defaultTier: string;
  /** server.public_url without a trailing slash; null: the dashboard uses the address the browser shows. */
  publicUrl: string | null;
  providers: ReadonlyMap<string, ProviderConfig>;
  models: ReadonlyMap<string, ModelConfig>;
  tiers: ReadonlyMap<string, ReadonlySet<string>>;
  /** tiers.<tier>.limits: each tier's default rate and concurrency limits (a tier without them: none). */
  tierLimits: ReadonlyMap<string, TierLimits>;
  /** server.trusted_proxies: the only peers whose X-Forwarded-* headers count. */
  trustedProxies: TrustedProxies;
  /** The config file's `media` section as written; src/media/settings.ts fills in defaults. */
  media: ConfigFile["media"];
  /** The `upstream_health` section: every upstream key's circuit breaker. */
  upstreamHealth: BreakerSettings;
  /** The `billing` section. */
  billing: BillingSettings;
  /** The `request_log` section; null when request_log.enabled is false. */
  requestLog: RequestLogSettings | null;
  /** The `metrics` section (GET /metrics); null: no metrics are served or recorded. */
  metrics: MetricsSettings | null;
  /** Traces from the OTEL_* environment variables; null (the default): no tracing at all. */
  tracing: TracingSettings | null;
}

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

export class ConfigError extends Error {
  override name = "ConfigError";
}

const DEFAULT_OUTPUT_TOKENS = 4096;

export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): GatewayConfig {
  const explicit = env.GATEWAY_CONFIG;
  const candidate = explicit ? resolvePath(cwd, explicit) : resolve(cwd, "gateway.config.yaml");
  if (explicit && !existsSync(candidate)) throw new ConfigError(`${candidate}: file not found (from GATEWAY_CONFIG)`);
  const sourcePath = existsSync(candidate) ? candidate : null;
  // Read once: the bytes parsed are the bytes hashed, even if the file changes meanwhile.
  const text = sourcePath ? readConfigText(sourcePath) : "";
  const file = withDemoCatalog(sourcePath ? parseConfigText(text, sourcePath, env) : configFileSchema.parse({}), sourcePath ?? "(defaults)");
  const dataDir = resolvePath(cwd, env.GATEWAY_DATA_DIR ?? "data");
  const config: Omit<GatewayConfig, "restartOnlySettings"> = {
    sourcePath,
    version: createHash("sha256").update(text).digest("hex"),
    host: env.HOST ?? "127.0.0.1",
    port: parsePort(env.PORT),
    databaseUrl: env.DATABASE_URL?.trim() || null,
    dataDir,
    sqlitePath: resolve(dataDir, "gateway.db"),
    secret: env.GATEWAY_SECRET ?? null,
    logLevel: env.LOG_LEVEL ?? "info",
    trustedProxies: trustedProxiesFrom(file.server.trusted_proxies ?? [], sourcePath ?? "(defaults)"),
    publicUrl: publicUrlFrom(file.server.public_url, sourcePath ?? "(defaults)"),
    metrics: metricsSettingsFrom(file.metrics, env, (field, message) => {
      throw new ConfigError(`${sourcePath ?? "(defaults)"}: ${field}: ${message}`);
    }),
    tracing: tracingSettingsFromEnv(env, (message) => {
      throw new ConfigError(message);
    }),
    ...buildCatalog(file, sourcePath ?? "(defaults)"),
  };
  return { ...config, restartOnlySettings: restartOnlySettingsOf(config, file) };
}

/** Names are the config file's keys (or the environment variable's); values are compared, never shown. */
function restartOnlySettingsOf(config: Omit<GatewayConfig, "restartOnlySettings">, file: ConfigFile): Record<string, string> {
  const server = file.server;
  return {
    HOST: config.host,
    PORT: String(config.port),
    DATABASE_URL: config.databaseUrl ?? "",
    GATEWAY_DATA_DIR: config.dataDir,
    GATEWAY_SECRET: config.secret ?? "",
    LOG_LEVEL: config.logLevel,
    "server.body_limit_mb": String(server.body_limit_mb),
    "server.headers_timeout_ms": String(server.headers_timeout_ms),
    "server.request_timeout_ms": String(server.request_timeout_ms),
    "server.keep_alive_timeout_ms": String(server.keep_alive_timeout_ms),
    "server.max_connections": String(server.max_connections),
    "server.trusted_proxies": JSON.stringify(server.trusted_proxies ?? []),
    metrics: JSON.stringify(config.metrics),
    upstream_health: JSON.stringify(config.upstreamHealth),
    // The request log's writer is built once at start (its buffer and timers outlive a snapshot).
    request_log: JSON.stringify(config.requestLog),
    "OTEL_* (tracing)": JSON.stringify(config.tracing),
  };
}

/**
 * The settings whose values differ between the running config and a new one, by name: what a
 * reload cannot apply. Empty when the new config may be swapped in.
 */
export function restartOnlyChanges(running: GatewayConfig, next: GatewayConfig): string[] {
  const names = new Set([...Object.keys(running.restartOnlySettings), ...Object.keys(next.restartOnlySettings)]);
  return [...names].filter((name) => running.restartOnlySettings[name] !== next.restartOnlySettings[name]);
}

/**
 * server.public_url: an http(s) origin, optionally with a path prefix (a gateway mounted under one),
 * without credentials, query or fragment; kept without its trailing slash so snippets append paths.
 */
export function publicUrlFrom(text: string | undefined, source: string): string | null {
  if (text === undefined) return null;
  const fail = (message: string): never => {
    throw new ConfigError(`${source}: server.public_url: ${message}`);
  };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail(`"${text}" is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") fail("must start with http:// or https://");
  if (url.username || url.password || url.search || url.hash) fail("give the address only: no user, password, query or fragment");
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
}

/**
 * The file with the demo provider and models added when it asks for them (`demo: true`) or, by
 * default, when it defines no providers: a first start without a config can answer and bill.
 */
export function withDemoCatalog(file: ConfigFile, source: string): ConfigFile {
  if (!(file.demo ?? Object.keys(file.providers).length === 0)) return file;
  if (DEMO_PROVIDER in file.providers)
    throw new ConfigError(`${source}: providers.${DEMO_PROVIDER}: the name is taken by the demo provider (demo: true); rename it or set demo: false`);
  for (const [i, m] of file.models.entries()) {
    if (demoModels.some((d) => d.id === m.id)) throw new ConfigError(`${source}: models[${i}].id: "${m.id}" is a demo model's id (demo: true); rename it or set demo: false`);
  }
  return { ...file, providers: { ...file.providers, [DEMO_PROVIDER]: demoProvider }, models: [...file.models, ...demoModels] };
}

function trustedProxiesFrom(entries: readonly string[], source: string): TrustedProxies {
  const ranges = entries.map((entry, i) => {
    const range = parseProxyRange(entry);
    if ("error" in range) throw new ConfigError(`${source}: server.trusted_proxies[${i}]: ${range.error}`);
    return range;
  });
  return new TrustedProxies(ranges);
}

function resolvePath(cwd: string, path: string): string {
  return isAbsolute(path) ? path : resolve(cwd, path);
}

function parsePort(text: string | undefined): number {
  if (text === undefined || text === "") return 8080;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`PORT: "${text}" is not a port number`);
  return port;
}

export function readConfigFile(path: string, env: NodeJS.ProcessEnv): ConfigFile {
  return parseConfigText(readConfigText(path), path, env);
}

function readConfigText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(`${path}: cannot be read: ${(error as Error).message.split("\n")[0]}`);
  }
}

function parseConfigText(text: string, path: string, env: NodeJS.ProcessEnv): ConfigFile {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new ConfigError(`${path}: not valid YAML: ${(error as Error).message.split("\n")[0]}`);
  }
  const substituted = substituteEnv(raw ?? {}, env, path, []);
  const parsed = configFileSchema.safeParse(substituted);
  if (!parsed.success) throw new ConfigError(`${path}: ${describeIssue(parsed.error.issues[0]!)}`);
  return parsed.data;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const field = formatPath(issue.path);
  return `${field || "(top level)"}: ${issue.message}`;
}

function formatPath(path: ReadonlyArray<PropertyKey>): string {
  return path.map((part, i) => (typeof part === "number" ? `[${part}]` : `${i ? "." : ""}${String(part)}`)).join("");
}

// ${VAR} in any string value; a missing variable is a start-up error naming the field.
function substituteEnv(value: unknown, env: NodeJS.ProcessEnv, file: string, path: PropertyKey[]): unknown {
  if (typeof value === "string") {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      const found = env[name];
      if (found === undefined) throw new ConfigError(`${file}: ${formatPath(path)}: environment variable ${name} is not set`);
      return found;
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => substituteEnv(item, env, file, [...path, i]));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteEnv(v, env, file, [...path, k])]));
  }
  return value;
}

function buildCatalog(file: ConfigFile, source: string) {
  const fail = (field: string, message: string): never => {
    throw new ConfigError(`${source}: ${field}: ${message}`);
  };
  const providers = new Map<string, ProviderConfig>();
  for (const [name, p] of Object.entries(file.providers)) {
    const capabilities = upstreams[p.type].capabilities;
    const apis = p.apis ?? capabilities.defaultApis;
    for (const api of apis) {
      if (!capabilities.apis.includes(api))
        fail(`providers.${name}.apis`, `a provider of type ${p.type} has no "${api}" API (it may list: ${capabilities.apis.join(", ") || "nothing"})`);
    }
    if (p.api_version !== undefined && !capabilities.providerSettings.includes("api_version"))
      fail(`providers.${name}.api_version`, `a provider of type ${p.type} takes no api_version (only ${typesTaking("api_version")})`);
    if (p.region !== undefined && !capabilities.providerSettings.includes("region"))
      fail(`providers.${name}.region`, `a provider of type ${p.type} takes no region (only ${typesTaking("region")})`);
    const region = capabilities.providerSettings.includes("region") ? signingRegion(p.region, p.base_url, (message) => fail(`providers.${name}.region`, message)) : undefined;
    providers.set(name, {
      name,
      type: p.type,
      baseUrl: p.base_url.replace(/\/+$/, ""),
      sharedKeys: p.keys,
      apis: new Set(apis),
      headers: p.headers,
      timeoutMs: p.timeout_ms,
      connectTimeoutMs: p.connect_timeout_ms,
      ...(p.api_version === undefined ? {} : { apiVersion: p.api_version }),
      ...(region === undefined ? {} : { region }),
    });
  }

  const tiers = new Map<string, Set<string>>();
  const tierEntries = Object.entries(file.tiers);
  if (tierEntries.length === 0) tiers.set("default", new Set(["*"]));
  for (const [name, tier] of tierEntries) tiers.set(name, new Set(tier.models));
  const defaultTier = file.server.default_tier ?? (tiers.has("default") ? "default" : tiers.keys().next().value!);
  if (!tiers.has(defaultTier)) fail("server.default_tier", `tier "${defaultTier}" is not defined under tiers`);

  const models = new Map<string, ModelConfig>();
  const groupContext: GroupContext = { providers, fail, price: (pricing, at) => buildPricing(pricing, at, fail) };
  file.models.forEach((m, i) => {
    const at = `models[${i}]`;
    if (models.has(m.id)) fail(`${at}.id`, `duplicate model id "${m.id}"`);
    const provider = baseProviderOf(m, at, groupContext);
    const kinds = upstreams[provider.type].capabilities.kinds;
    if (!kinds.includes(m.kind)) fail(`${at}.kind`, `the provider "${provider.name}" (type ${provider.type}) cannot serve ${m.kind} models (only ${kinds.join(", ")})`);
    const model: ModelConfig = {
      id: m.id,
      kind: m.kind,
      provider,
      upstreamModel: m.upstream_model ?? m.id,
      contextWindow: m.context_window ?? null,
      maxOutputTokens: m.max_output_tokens ?? null,
      defaultOutputTokens: m.default_output_tokens ?? Math.min(m.max_output_tokens ?? DEFAULT_OUTPUT_TOKENS, DEFAULT_OUTPUT_TOKENS),
      modalities: m.modalities ?? defaultModalities(m.kind),
      ...(m.prompt_caching === undefined ? {} : { promptCaching: m.prompt_caching }),
      pricing: buildPricing(m.pricing, `${at}.pricing`, fail),
      tiers: [...tiers].filter(([, ids]) => ids.has("*") || ids.has(m.id)).map(([name]) => name),
    };
    const group = buildRoutingGroup(m, at, model, groupContext);
    models.set(m.id, group ? { ...model, group } : model);
  });
  for (const [name, ids] of tiers) {
    for (const id of ids) if (id !== "*" && !models.has(id)) fail(`tiers.${name}.models`, `model "${id}" is not defined under models`);
  }
  const tierLimits = new Map<string, TierLimits>();
  for (const [name, tier] of tierEntries) {
    for (const id of Object.keys(tier.limits?.models ?? {})) {
      const ids = tiers.get(name)!;
      if (!models.has(id) || !(ids.has("*") || ids.has(id))) fail(`tiers.${name}.limits.models`, `model "${id}" is not a model of the tier ${name}`);
    }
    tierLimits.set(name, tierLimitsOf(tier.limits));
  }
  const server = file.server;
  // Node refuses a headers timeout above the request timeout; say so in the config's own terms.
  if (server.headers_timeout_ms > server.request_timeout_ms) fail("server.headers_timeout_ms", `must not exceed server.request_timeout_ms (${server.request_timeout_ms})`);
  const connections: ConnectionLimits = {
    headersTimeoutMs: server.headers_timeout_ms,
    requestTimeoutMs: server.request_timeout_ms,
    keepAliveTimeoutMs: server.keep_alive_timeout_ms,
    maxConnections: server.max_connections,
  };
  const health = file.upstream_health;
  const upstreamHealth: BreakerSettings = {
    windowMs: health.window_ms,
    minRequests: health.min_requests,
    failureThreshold: health.failure_threshold,
    openMs: health.open_ms,
    halfOpenTrials: health.half_open_trials,
  };
  return {
    bodyLimitBytes: Math.floor(server.body_limit_mb * 1024 * 1024),
    connections,
    signup: server.signup,
    defaultTier,
    providers,
    models,
    tiers,
    tierLimits,
    media: file.media,
    upstreamHealth,
    billing: { clampMinOutputTokens: file.billing.clamp.min_output_tokens },
    requestLog: file.request_log.enabled
      ? { retentionDays: file.request_log.retention_days, maxBuffered: file.request_log.max_buffered, flushIntervalMs: file.request_log.flush_interval_ms }
      : null,
  };
}

/** The registered types that take a provider setting, for the refusal's message. */
function typesTaking(setting: ProviderSetting): string {
  return Object.entries(upstreams)
    .filter(([, descriptor]) => descriptor.capabilities.providerSettings.includes(setting))
    .map(([type]) => type)
    .join(", ");
}

function defaultModalities(kind: ModelKind) {
  if (kind === "image") return { input: ["text"], output: ["image"] };
  if (kind === "video") return { input: ["text"], output: ["video"] };
  if (kind === "embedding") return { input: ["text"], output: ["embedding"] };
  return { input: ["text"], output: ["text"] };
}

function buildPricing(pricing: ModelFileEntry["pricing"], at: string, fail: (field: string, message: string) => never): ModelPricing {
  const price = (value: string | number | undefined, field: string): Nano | undefined => {
    if (value === undefined) return undefined;
    const nano = parseUsd(value);
    if (nano === null || nano < 0n) return fail(`${at}.${field}`, `"${value}" is not a non-negative USD amount with at most 9 decimals`);
    return nano;
  };
  const configured = pricing as Partial<Record<string, string | number>>;
  // A price not configured takes the one its dimension defaults to (dimensions.ts priceDefault), else 0.
  const byKey = new Map<string, Nano>();
  const priceOfKey = (key: string): Nano => {
    const known = byKey.get(key);
    if (known !== undefined) return known;
    const dimension = DIMENSIONS.find((d) => d.priceKey === key);
    const nano = price(configured[key], key) ?? (dimension?.priceDefault ? priceOfKey(dimension.priceDefault) : 0n);
    byKey.set(key, nano);
    return nano;
  };
  const prices = {} as Record<DimensionPriceField, Nano>;
  for (const d of DIMENSIONS) if (d.priceKey !== null && d.priceField !== null) prices[d.priceField] = priceOfKey(d.priceKey);
  const perImage = new Map<string, Nano>();
  for (const [key, value] of Object.entries(pricing.per_image ?? {})) perImage.set(key, price(value, `per_image.${key}`) ?? 0n);
  const tier = pricing.long_context;
  if (tier === undefined) return { ...prices, perImage };
  // A tier's price not configured is the base price of the same dimension.
  const tierPrices = {} as TokenPrices;
  const tierConfigured = tier as Partial<Record<string, string | number>>;
  for (const d of TOKEN_DIMENSIONS) tierPrices[d.priceField] = price(tierConfigured[d.priceKey], `long_context.${d.priceKey}`) ?? prices[d.priceField];
  return { ...prices, perImage, longContext: { aboveInputTokens: tier.above_input_tokens, ...tierPrices } };
}

// bedrock-runtime.us-east-1.amazonaws.com, bedrock-runtime-fips.us-gov-west-1.amazonaws.com
const AWS_REGIONAL_HOST = /^[a-z0-9-]+\.([a-z]{2}(?:-[a-z]+)+-\d{1,2})\.amazonaws\.com$/;

/** The region a provider of a signing type (bedrock) signs for: its `region`, else the one its AWS base URL names. */
function signingRegion(region: string | undefined, baseUrl: string, fail: (message: string) => never): string {
  if (region !== undefined) return region;
  const named = AWS_REGIONAL_HOST.exec(new URL(baseUrl).hostname);
  return named?.[1] ?? fail("required: the base_url is not an AWS regional host such as bedrock-runtime.us-east-1.amazonaws.com");
}
