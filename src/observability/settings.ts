// The observability settings, parsed once at start by config/load.ts: the `metrics` section of the
// config file (with its token from the environment) and the standard OTEL_* variables for traces.
// Kept free of prom-client and the OpenTelemetry SDK so that loading a config loads neither.
import type { MetricsSettings } from "./metrics.js";

export interface TracingSettings {
  /** The OTLP/HTTP traces URL (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces). */
  url: string;
  /** OTEL_EXPORTER_OTLP_TRACES_HEADERS, else OTEL_EXPORTER_OTLP_HEADERS: `k=v,k2=v2`, values URL-encoded. */
  headers: Record<string, string>;
  serviceName: string;
  /** OTEL_TRACES_SAMPLER_ARG under a traceidratio sampler; 1 otherwise. */
  ratio: number;
  /** Under a parentbased_* sampler (the default), a client's sampled flag decides. */
  parentBased: boolean;
}

export interface MetricsFileSection {
  token_env?: string | undefined;
  listen?: string | undefined;
  account_series: { enabled: boolean; max_accounts: number };
}

const DEFAULT_OTLP_ENDPOINT = "http://localhost:4318";

/**
 * Traces are off unless OTEL_TRACES_EXPORTER names `otlp` (and OTEL_SDK_DISABLED is not true). The
 * exporter speaks OTLP over HTTP with JSON bodies; another protocol is refused at start.
 */
export function tracingSettingsFromEnv(env: NodeJS.ProcessEnv, fail: (message: string) => never): TracingSettings | null {
  if ((env.OTEL_SDK_DISABLED ?? "").trim().toLowerCase() === "true") return null;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "")
    .split(",")
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
  if (!exporters.includes("otlp")) return null;
  const unsupported = exporters.filter((e) => e !== "otlp" && e !== "none");
  if (unsupported.length > 0) fail(`OTEL_TRACES_EXPORTER: only "otlp" is supported, not ${unsupported.map((e) => `"${e}"`).join(", ")}`);
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/json").trim();
  if (protocol !== "http/json") fail(`OTEL_EXPORTER_OTLP_PROTOCOL: "${protocol}" is not supported; the gateway exports traces as OTLP over HTTP with JSON (http/json)`);
  const tracesEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = (env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || DEFAULT_OTLP_ENDPOINT).replace(/\/+$/, "");
  const url = tracesEndpoint || `${base}/v1/traces`;
  if (!/^https?:\/\/[^/]/.test(url)) fail(`OTEL_EXPORTER_OTLP_ENDPOINT: "${url}" is not an http(s) URL`);
  const headers = parseHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? env.OTEL_EXPORTER_OTLP_HEADERS ?? "", fail);
  const sampler = (env.OTEL_TRACES_SAMPLER ?? "parentbased_always_on").trim();
  let ratio = 1;
  if (sampler.endsWith("traceidratio")) {
    ratio = env.OTEL_TRACES_SAMPLER_ARG === undefined ? 1 : Number(env.OTEL_TRACES_SAMPLER_ARG);
    if (!(ratio >= 0 && ratio <= 1)) fail(`OTEL_TRACES_SAMPLER_ARG: "${env.OTEL_TRACES_SAMPLER_ARG}" is not a ratio from 0 to 1`);
  } else if (sampler.endsWith("always_off")) ratio = 0;
  else if (!sampler.endsWith("always_on")) fail(`OTEL_TRACES_SAMPLER: "${sampler}" is not supported (always_on, always_off, traceidratio and their parentbased_ forms are)`);
  return { url, headers, serviceName: env.OTEL_SERVICE_NAME?.trim() || "model-gateway", ratio, parentBased: sampler.startsWith("parentbased_") };
}

function parseHeaders(text: string, fail: (message: string) => never): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const part of text.split(",")) {
    if (!part.trim()) continue;
    const eq = part.indexOf("=");
    if (eq <= 0) fail(`OTEL_EXPORTER_OTLP_HEADERS: "${part.trim().split("=")[0]}..." is not key=value`);
    headers[decodeURIComponent(part.slice(0, eq).trim())] = decodeURIComponent(part.slice(eq + 1).trim());
  }
  return headers;
}

/** The `metrics` section with its token read from the environment; null when metrics are off. */
export function metricsSettingsFrom(section: MetricsFileSection | undefined, env: NodeJS.ProcessEnv, fail: (field: string, message: string) => never): MetricsSettings | null {
  if (!section) return null;
  let token: string | null = null;
  if (section.token_env !== undefined) {
    token = env[section.token_env] ?? null;
    if (!token) fail("metrics.token_env", `environment variable ${section.token_env} is not set or empty`);
    if (token.length < 16) fail("metrics.token_env", `the token in ${section.token_env} is shorter than 16 characters`);
  }
  let listen: MetricsSettings["listen"] = null;
  if (section.listen !== undefined) {
    const match = /^(?:\[([0-9a-fA-F:]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(section.listen.trim());
    const port = match ? Number(match[3]) : NaN;
    if (!match || port > 65535) fail("metrics.listen", `"${section.listen}" is not host:port (for example 127.0.0.1:9464)`);
    listen = { host: (match[1] ?? match[2])!, port };
  }
  if (token === null && listen === null) fail("metrics", "set token_env (GET /metrics with a bearer token) or listen (a separate address), or both");
  return { token, listen, accountSeriesMax: section.account_series.enabled ? section.account_series.max_accounts : null };
}
