// What a request accumulates on its way through the pipeline, for the one log line at the end
// and for headers such as the cost. Kept as plain fields on the Fastify request.
import type { FastifyRequest } from "fastify";
import { formatUsd } from "../core/money.js";
import type { Usage } from "../core/usage.js";
import type { GatewayConfig } from "../config/load.js";
import type { FinishedRequest, GatewayMetrics } from "../observability/metrics.js";
import type { RequestTrace } from "../observability/spans.js";
import { ERROR_CATALOGUE, type ErrorShape, type ErrorType } from "../errors/catalogue.js";
import type { RequestLog } from "../requestlog/request-log.js";
import type { RequestLogEntry } from "../store/request-log-store.js";
import { clientAttribution } from "./client-attribution.js";
import type { GuardrailAction } from "../core/guardrails/guardrail.js";

export interface RequestMeter {
  startedAt: number;
  keyId?: string;
  accountId?: string;
  model?: string;
  provider?: string;
  /** A routing group's serving deployment. */
  deployment?: string;
  attempts?: number;
  inputTokens?: number;
  outputTokens?: number;
  costNano?: bigint;
  errorType?: string;
  /** The error's message for the request log (loggableMessage: never text quoted from the request). */
  errorMessage?: string;
  /** The model id the request named, once it is known to be storable (admission.ts), existing or not. */
  requestedModel?: string;
  /** The metered usage (metrics and the request's span count its tokens by type). */
  usage?: Usage;
  /** The serving model's upstream name (gen_ai.response.model on the request's span). */
  responseModel?: string;
  /** A stream: when its first byte went to the client (performance.now()). */
  firstByteAt?: number;
  /** Set once the request's line, metrics and span were recorded (recordRequest runs once). */
  recorded?: boolean;
  /**
   * The route's name for the log, metrics and traces when one registered route serves several
   * (Gemini's `/v1beta/models/{model}:generateContent`, `:streamGenerateContent`, `:countTokens`).
   */
  route?: string;
  /** Guardrail decisions by "side:guardrail", the strongest action each took (guardrails/stage.ts). */
  guardrails?: Map<string, GuardrailAction>;
  /** The request's tags, "key=value" sorted (admission.ts requestTags): for the request log. */
  tags?: string[];
}

declare module "fastify" {
  interface FastifyRequest {
    meter: RequestMeter;
    errorShape: ErrorShape;
    /** The request's span: set only while tracing is on (observability/tracing.ts). */
    trace: RequestTrace | undefined;
  }
}

/** Google's methods under /v1/models (the Gemini routes' v1 alias): the path ends in `:{method}`. */
const GOOGLE_V1_METHOD = /^\/v1\/models\/[^?]*:(generateContent|streamGenerateContent|countTokens|embedContent|batchEmbedContents)(\?|$)/;

export function errorShapeFor(url: string): ErrorShape {
  if (url.startsWith("/v1beta/") || GOOGLE_V1_METHOD.test(url)) return "google";
  return url.startsWith("/v1/messages") ? "anthropic" : "openai";
}

/** The one structured log line per request (the request id comes from the request logger). */
export function requestLogLine(request: FastifyRequest, status: number): Record<string, unknown> {
  const m = request.meter;
  return {
    method: request.method,
    path: request.url.split("?")[0],
    status,
    latency_ms: Math.round((performance.now() - m.startedAt) * 100) / 100,
    key: m.keyId,
    account: m.accountId,
    model: m.model,
    provider: m.provider,
    deployment: m.deployment,
    attempts: m.attempts,
    input_tokens: m.inputTokens,
    output_tokens: m.outputTokens,
    cost_usd: m.costNano === undefined ? undefined : formatUsd(m.costNano),
    error: m.errorType,
    guardrails: m.guardrails === undefined ? undefined : Object.fromEntries(m.guardrails),
    // Claude Code's session and agent ids (bounded, never prompt text): see client-attribution.ts.
    attribution: clientAttribution(request.headers),
  };
}

/** Where a finished request is recorded besides its log line (PipelineServices has them all). */
export interface RequestRecorders {
  config: GatewayConfig;
  /** Null when metrics are off. */
  metrics: GatewayMetrics | null;
  /** Null when request_log.enabled is false. */
  requestLog: RequestLog | null;
}

/**
 * The one place a finished request is recorded: its log line, its metrics (metrics on), its request
 * log entry (request log on: one push to a buffer), the end of its span (tracing on). Called by the
 * onResponse hook, and by a stream the client left (Fastify runs no onResponse for a response
 * destroyed before it finished).
 */
export function recordRequest(request: FastifyRequest, status: number, recorders: RequestRecorders): void {
  if (request.meter.recorded === true) return;
  request.meter.recorded = true;
  const { config, metrics, requestLog } = recorders;
  request.log.info(requestLogLine(request, status), "request");
  if (metrics !== null) {
    metrics.observeRequest(finishedRequest(request, status, config));
    for (const [where, action] of request.meter.guardrails ?? []) {
      const [side, guardrail] = where.split(":") as [string, string];
      metrics.guardrails.observe(guardrail, side, action);
    }
  }
  if (requestLog !== null && isGatewayRequest(request.url)) requestLog.append(requestLogEntry(request, status));
  if (request.trace !== undefined) endRequestTrace(request, request.trace, status, config);
}

/**
/**
 * A request whose client went away before it was answered: nothing is sent, so Fastify runs no
 * onResponse; recorded here as 499 (client_aborted), like a stream the client left.
 */
export function recordClientGone(request: FastifyRequest, recorders: RequestRecorders): void {
  request.meter.errorType = "client_aborted";
  delete request.meter.errorMessage;
  recordRequest(request, 499, recorders);
}

/**
 * The request log keeps the gateway's own API (model requests, /v1/models, /v1/me…) and whatever
 * matched no route; not the dashboard, the admin API, health checks and /metrics, which are the
 * operator's tooling and would otherwise fill it with their own polling; nor / (a person's browser,
 * sent on to the dashboard).
 */
export function isGatewayRequest(url: string): boolean {
  if (url === "/" || url.startsWith("/?")) return false;
  return !(url.startsWith("/dashboard") || url.startsWith("/admin/") || url.startsWith("/healthz") || url.startsWith("/readyz") || url.startsWith("/metrics"));
}

/** The request log's entry: ids, names and numbers from the meter, never prompt or completion text. */
export function requestLogEntry(request: FastifyRequest, status: number): RequestLogEntry {
  const m = request.meter;
  const now = performance.now();
  const usage = m.usage;
  return {
    createdAt: Math.round(performance.timeOrigin + m.startedAt),
    requestId: request.id,
    accountId: m.accountId ?? null,
    keyId: m.keyId ?? null,
    method: request.method,
    route: routeOf(request),
    model: m.model ?? null,
    provider: m.provider ?? null,
    deployment: m.deployment ?? null,
    status: recordedStatus(request, status),
    errorType: m.errorType ?? null,
    errorMessage: m.errorType === undefined ? null : (m.errorMessage ?? defaultMessage(m.errorType)),
    requestedModel: m.requestedModel ?? null,
    latencyUs: Math.round((now - m.startedAt) * 1000),
    firstByteUs: m.firstByteAt === undefined ? null : Math.round((m.firstByteAt - m.startedAt) * 1000),
    attempts: m.attempts ?? null,
    inputTokens: usage === undefined ? null : usage.inputTokens,
    cachedTokens: usage === undefined ? null : usage.cachedInputTokens,
    outputTokens: usage === undefined ? null : usage.outputTokens,
    reasoningTokens: usage === undefined ? null : usage.reasoningTokens,
    costNano: m.costNano ?? null,
    estimated: usage === undefined ? null : usage.estimated ? 1 : 0,
    guardrails: m.guardrails === undefined ? null : [...m.guardrails].map(([where, action]) => `${where}:${action}`).join(","),
    tags: m.tags === undefined ? null : m.tags.join(","),
  };
}

/** A message for an error type set without one (a stream that failed, a client that left). */
function defaultMessage(type: string): string {
  if (type === "client_aborted") return "The client closed the connection before the answer was complete.";
  return type in ERROR_CATALOGUE ? ERROR_CATALOGUE[type as ErrorType].message : type;
}

/** The route pattern a request matched (bounded, unlike its URL); "unmatched" for a 404. */
export function routeOf(request: FastifyRequest): string {
  return request.meter.route ?? request.routeOptions.url ?? "unmatched";
}

/** The status metrics and traces record: 499 for a stream the client left (its head may have said 200). */
export function recordedStatus(request: FastifyRequest, status: number): number {
  return request.meter.errorType === "client_aborted" ? 499 : status;
}

/** What the metrics take from a finished request: read from the same meter as the log line. */
export function finishedRequest(request: FastifyRequest, status: number, config: GatewayConfig): FinishedRequest {
  const m = request.meter;
  const now = performance.now();
  return {
    route: routeOf(request),
    status: recordedStatus(request, status),
    seconds: (now - m.startedAt) / 1000,
    model: m.model,
    provider: m.provider,
    providerType: m.provider === undefined ? undefined : config.providers.get(m.provider)?.type,
    accountId: m.accountId,
    attempts: m.attempts,
    usage: m.usage,
    costNano: m.costNano,
    firstByteSeconds: m.firstByteAt === undefined ? undefined : (m.firstByteAt - m.startedAt) / 1000,
  };
}

/** Ends the request's span with what the meter holds (tracing on only). */
export function endRequestTrace(request: FastifyRequest, trace: RequestTrace, status: number, config: GatewayConfig): void {
  const m = request.meter;
  trace.tracing.endRequest(trace, routeOf(request), {
    status: recordedStatus(request, status),
    requestId: request.id,
    model: m.model,
    provider: m.provider,
    providerType: m.provider === undefined ? undefined : config.providers.get(m.provider)?.type,
    responseModel: m.responseModel,
    deployment: m.deployment,
    attempts: m.attempts,
    usage: m.usage,
    costUsd: m.costNano === undefined ? undefined : formatUsd(m.costNano),
    errorType: m.errorType,
  });
}
