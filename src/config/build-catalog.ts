// The validated config file to the runtime catalogue: providers (checked against what their type
// can do), tiers, models with their prices and routing groups, tier limits, and the server,
// upstream-health, billing and request-log settings. Every refusal names the field.
import { parseUsd, type Nano } from "../core/money.js";
import { parsePriceFactor } from "../core/price-factor.js";
import { DIMENSIONS, TOKEN_DIMENSIONS, type DimensionPriceField } from "../core/dimensions.js";
import { tierLimitsOf, type TierLimits } from "../core/traffic-limits.js";
import type { BreakerSettings } from "../upstreams/circuit-breaker.js";
import { capabilitiesOf, upstreamCapabilities } from "../upstreams/capabilities.js";
import type { ModelConfig, ModelKind, ModelPricing, ProviderConfig, ProviderSetting, TokenPrices } from "../core/catalog.js";
import { ConfigError, type ConfigIssue, type ConnectionLimits, type SignupMode } from "./gateway-config.js";
import { baseProviderOf, buildRoutingGroup, servedModel, type GroupContext } from "./routing-groups.js";
import type { ConfigFile, ModelFileEntry } from "./schema.js";

const DEFAULT_OUTPUT_TOKENS = 4096;

/** Thrown by `fail` to abandon the entry being built; the issue is already recorded. */
class EntryRefused extends Error {}

/**
 * Builds the runtime catalogue, or throws ConfigError with every issue found: each provider, model
 * and tier is checked on its own (an entry stops at its first issue; a model on a refused provider
 * is not checked further), so one run lists everything there is to fix.
 */
export function buildCatalog(file: ConfigFile, source: string) {
  const issues: ConfigIssue[] = [];
  const fail = (field: string, message: string): never => {
    issues.push({ field, message });
    throw new EntryRefused();
  };
  const entry = (build: () => void): void => {
    try {
      build();
    } catch (error) {
      if (!(error instanceof EntryRefused)) throw error;
    }
  };
  const providers = new Map<string, ProviderConfig>();
  const refusedProviders = new Set<string>();
  for (const [name, p] of Object.entries(file.providers))
    entry(() => {
      refusedProviders.add(name);
      const capabilities = capabilitiesOf(p);
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
        maxConnections: p.max_connections,
        connectionWaitMs: p.connection_wait_ms,
        http2: p.http2,
        ...(p.api_version === undefined ? {} : { apiVersion: p.api_version }),
        ...(region === undefined ? {} : { region }),
      });
      refusedProviders.delete(name);
    });

  const tiers = new Map<string, Set<string>>();
  const tierEntries = Object.entries(file.tiers);
  if (tierEntries.length === 0) tiers.set("default", new Set(["*"]));
  for (const [name, tier] of tierEntries) tiers.set(name, new Set(tier.models));
  const defaultTier = file.server.default_tier ?? (tiers.has("default") ? "default" : tiers.keys().next().value!);
  entry(() => {
    if (!tiers.has(defaultTier)) fail("server.default_tier", `tier "${defaultTier}" is not defined under tiers`);
  });

  const models = new Map<string, ModelConfig>();
  const disabledProviders = new Set(Object.entries(file.providers).flatMap(([name, p]) => (p.disabled === true ? [name] : [])));
  const groupContext: GroupContext = { providers, fail, price: (pricing, at) => buildPricing(pricing, at, fail) };
  const knownIds = new Set<string>();
  file.models.forEach((m, i) =>
    entry(() => {
      const at = `models[${i}]`;
      if (knownIds.has(m.id)) fail(`${at}.id`, `duplicate model id "${m.id}"`);
      knownIds.add(m.id);
      // A model on a provider already refused adds no issue of its own: the provider's is the one to fix.
      const named = m.provider ?? m.deployments?.map((d) => d.provider).find((p) => refusedProviders.has(p));
      if (named !== undefined && refusedProviders.has(named)) throw new EntryRefused();
      const provider = baseProviderOf(m, at, groupContext);
      const kinds = capabilitiesOf(provider).kinds;
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
      // A disabled model, or one whose every provider is disabled, is checked like any other but not
      // served: absent from the runtime catalogue, it is unlisted and refused as an unknown model.
      const served = m.disabled === true ? null : servedModel(group ? { ...model, group } : model, disabledProviders);
      if (served) models.set(m.id, served);
    }),
  );
  for (const [name, ids] of tiers) {
    for (const id of ids)
      entry(() => {
        if (id !== "*" && !knownIds.has(id)) fail(`tiers.${name}.models`, `model "${id}" is not defined under models`);
      });
  }
  const tierLimits = new Map<string, TierLimits>();
  const tierPriceFactors = new Map<string, number>();
  for (const [name, tier] of tierEntries) {
    for (const id of Object.keys(tier.limits?.models ?? {}))
      entry(() => {
        const ids = tiers.get(name)!;
        if (!knownIds.has(id) || !(ids.has("*") || ids.has(id))) fail(`tiers.${name}.limits.models`, `model "${id}" is not a model of the tier ${name}`);
      });
    tierLimits.set(name, tierLimitsOf(tier.limits));
    if (tier.price_factor !== undefined)
      entry(() => {
        const ppm =
          parsePriceFactor(tier.price_factor!) ??
          fail(`tiers.${name}.price_factor`, `"${tier.price_factor}" is not a factor above 0 and at most 1000 with at most 6 decimals, written as a string ("1.5")`);
        tierPriceFactors.set(name, ppm);
      });
  }
  const server = file.server;
  // Node refuses a headers timeout above the request timeout; say so in the config's own terms.
  entry(() => {
    if (server.headers_timeout_ms > server.request_timeout_ms) fail("server.headers_timeout_ms", `must not exceed server.request_timeout_ms (${server.request_timeout_ms})`);
  });
  if (issues.length > 0) throw ConfigError.of(source, issues);
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
    signup: signupMode(file),
    passwordLinkTtlMs: server.password_link_ttl_hours * 3_600_000,
    defaultTier,
    providers,
    models,
    tiers,
    tierLimits,
    tierPriceFactors,
    media: file.media,
    upstreamHealth,
    billing: { clampMinOutputTokens: file.billing.clamp.min_output_tokens },
    alerts: {
      allowedHttpHosts: file.alerts.allowed_http_hosts.map((host) => host.toLowerCase()),
      attemptTimeoutMs: file.alerts.attempt_timeout_ms,
      maxAttempts: file.alerts.max_attempts,
      backoffMs: file.alerts.backoff_ms,
      pollMs: file.alerts.poll_ms,
      reports: file.alerts.reports,
    },
    ledgerVerifyIntervalMs: file.ledger_verify.interval_s * 1000,
    requestLog: file.request_log.enabled
      ? { retentionDays: file.request_log.retention_days, maxBuffered: file.request_log.max_buffered, flushIntervalMs: file.request_log.flush_interval_ms }
      : null,
  };
}

/**
 * server.signup as written (invite_only: the earlier name of invite), or by default open while the
 * file configures no providers but demo ones (the demo first run) and closed once it does.
 */
function signupMode(file: ConfigFile): SignupMode {
  const written = file.server.signup;
  if (written === "invite_only") return "invite";
  if (written !== undefined) return written;
  return Object.values(file.providers).some((provider) => !capabilitiesOf(provider).demo) ? "closed" : "open";
}

/** The registered types that take a provider setting, for the refusal's message. */
function typesTaking(setting: ProviderSetting): string {
  return Object.entries(upstreamCapabilities)
    .filter(([, capabilities]) => capabilities.providerSettings.includes(setting))
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
