// The only reader of environment variables and of the config file. Everything is parsed and
// validated at start and again on a reload (decision 0021); the request path reads the typed
// result, never the file.
//
// This module puts the parts together: config-file.ts reads and validates the file,
// build-catalog.ts turns it into the runtime catalogue, gateway-config.ts holds the result's type.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { parseProxyRange, TrustedProxies } from "../core/trusted-proxies.js";
import { MIN_LEDGER_SECRET_LENGTH } from "../store/ledger-chain-key.js";
import { DEFAULT_DATABASE_TIMEOUTS } from "../store/database-timeouts.js";
import { metricsSettingsFrom, tracingSettingsFromEnv } from "../observability/settings.js";
import { buildCatalog } from "./build-catalog.js";
import { parseConfigText, readConfigText, withDemoCatalog } from "./config-file.js";
import { ConfigError, type ConfigIssue, type GatewayConfig } from "./gateway-config.js";
import { guardrailSettingsFrom } from "./guardrail-settings.js";
import type { GuardrailSettings } from "../core/guardrails/guardrail.js";
import { mcpSettingsFrom } from "./mcp-settings.js";
import { oidcSettingsFrom } from "./oidc-settings.js";
import { stripeSettingsFrom } from "./stripe-settings.js";
import { cacheSettingsFrom } from "./cache-settings.js";
import { configFileSchema, type ConfigFile } from "./schema.js";
import { withSecretFiles } from "./secret-files.js";

export type { ModelConfig, ModelKind, ModelPricing, ProviderConfig, ProviderType, UpstreamApi } from "../core/catalog.js";
export type { BillingSettings, ConnectionLimits, GatewayConfig, SignupMode } from "./gateway-config.js";
export { ConfigError } from "./gateway-config.js";
export { readConfigFile, withDemoCatalog } from "./config-file.js";

export function loadConfig(environment: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): GatewayConfig {
  const env = withSecretFiles(environment, cwd);
  const explicit = env.GATEWAY_CONFIG;
  const candidate = explicit ? resolvePath(cwd, explicit) : resolve(cwd, "gateway.config.yaml");
  if (explicit && !existsSync(candidate)) throw new ConfigError(`${candidate}: file not found (from GATEWAY_CONFIG)`);
  const sourcePath = existsSync(candidate) ? candidate : null;
  // Read once: the bytes parsed are the bytes hashed, even if the file changes meanwhile.
  const text = sourcePath ? readConfigText(sourcePath) : "";
  const file = withDemoCatalog(sourcePath ? parseConfigText(text, sourcePath, env) : configFileSchema.parse({}), sourcePath ?? "(defaults)");
  const dataDir = resolvePath(cwd, env.GATEWAY_DATA_DIR ?? "data");
  const fileVersion = createHash("sha256").update(text).digest("hex");
  const config: Omit<GatewayConfig, "restartOnlySettings"> = {
    sourcePath,
    version: fileVersion,
    fileVersion,
    file,
    // Without a file there is nothing to edit, so the console and the admin API keep the catalog.
    catalogSource: file.catalog.source ?? (sourcePath === null ? "database" : "file"),
    catalogVersion: null,
    host: env.HOST ?? "127.0.0.1",
    port: parsePort(env.PORT),
    databaseUrl: env.DATABASE_URL?.trim() || null,
    databaseTimeouts: {
      connectMs: parseMilliseconds("DATABASE_CONNECT_TIMEOUT_MS", env.DATABASE_CONNECT_TIMEOUT_MS, DEFAULT_DATABASE_TIMEOUTS.connectMs),
      queryMs: parseMilliseconds("DATABASE_QUERY_TIMEOUT_MS", env.DATABASE_QUERY_TIMEOUT_MS, DEFAULT_DATABASE_TIMEOUTS.queryMs),
    },
    dataDir,
    sqlitePath: resolve(dataDir, "gateway.db"),
    secret: env.GATEWAY_SECRET ?? null,
    ledgerSecret: parseLedgerSecret(env.GATEWAY_LEDGER_SECRET),
    logLevel: env.LOG_LEVEL ?? "info",
    balanceEscrow: env.GATEWAY_BALANCE_ESCROW === "1" || env.GATEWAY_BALANCE_ESCROW === "true",
    trustedProxies: trustedProxiesFrom(file.server.trusted_proxies ?? [], sourcePath ?? "(defaults)"),
    publicUrl: publicUrlFrom(file.server.public_url, sourcePath ?? "(defaults)"),
    metrics: metricsSettingsFrom(file.metrics, env, (field, message) => {
      throw new ConfigError(`${sourcePath ?? "(defaults)"}: ${field}: ${message}`);
    }),
    oidc: oidcSettingsFrom(file.oidc, (field, message) => {
      throw new ConfigError(`${sourcePath ?? "(defaults)"}: ${field}: ${message}`);
    }),
    stripe: stripeSettingsFrom(file.stripe, sourcePath ? dirname(sourcePath) : cwd, (field, message) => {
      throw new ConfigError(`${sourcePath ?? "(defaults)"}: ${field}: ${message}`);
    }),
    mcp: mcpSettingsFrom(file.mcp, (field, message) => {
      throw new ConfigError(`${sourcePath ?? "(defaults)"}: ${field}: ${message}`);
    }),
    cache: cacheSettingsFrom(file.cache, env.REDIS_URL, (field, message) => {
      throw new ConfigError(`${sourcePath ?? "(defaults)"}: ${field}: ${message}`);
    }),
    tracing: tracingSettingsFromEnv(env, (message) => {
      throw new ConfigError(message);
    }),
    guardrails: guardrailsOf(file, sourcePath ?? "(defaults)"),
    ...buildCatalog(file, sourcePath ?? "(defaults)"),
  };
  return { ...config, restartOnlySettings: restartOnlySettingsOf(config, file) };
}

function guardrailsOf(file: ConfigFile, source: string): GuardrailSettings {
  const issues: ConfigIssue[] = [];
  const settings = guardrailSettingsFrom(file.guardrails, file.billing.charge_blocked_answers, issues);
  if (issues.length > 0) throw ConfigError.of(source, issues);
  return settings;
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
    GATEWAY_LEDGER_SECRET: config.ledgerSecret ?? "",
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
    // The response cache's backend is built once at start; its prices and TTL bounds apply on reload.
    REDIS_URL: config.cache.redisUrl ?? "",
    "cache.max_total_bytes": String(config.cache.maxTotalBytes),
    "cache.key_prefix": config.cache.keyPrefix,
    "OTEL_* (tracing)": JSON.stringify(config.tracing),
    // Where the catalog comes from decides what the console may do; it changes with a restart.
    "catalog.source": config.catalogSource,
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

/** GATEWAY_LEDGER_SECRET: unset or empty is none; a short one is refused rather than used. */
function parseLedgerSecret(text: string | undefined): string | null {
  if (text === undefined || text === "") return null;
  if (text.length < MIN_LEDGER_SECRET_LENGTH) throw new ConfigError(`GATEWAY_LEDGER_SECRET: at least ${MIN_LEDGER_SECRET_LENGTH} characters (it keys the ledger's hash chain)`);
  return text;
}

/** A timeout in whole milliseconds, 0 (none) to one hour. */
function parseMilliseconds(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined || text.trim() === "") return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0 || value > 3_600_000) throw new ConfigError(`${name}: "${text}" is not a number of milliseconds from 0 to 3600000`);
  return value;
}

function parsePort(text: string | undefined): number {
  if (text === undefined || text === "") return 8080;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`PORT: "${text}" is not a port number`);
  return port;
}
