// What a request accumulates on its way through the pipeline, for the one log line at the end
// and for headers such as the cost. Kept as plain fields on the Fastify request.
import type { FastifyRequest } from "fastify";
import { formatUsd } from "../core/money.js";
import type { ErrorShape } from "../errors/catalogue.js";
import { clientAttribution } from "./client-attribution.js";

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
}

declare module "fastify" {
  interface FastifyRequest {
    meter: RequestMeter;
    errorShape: ErrorShape;
  }
}

export function errorShapeFor(url: string): ErrorShape {
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
    // Claude Code's session and agent ids (bounded, never prompt text): see client-attribution.ts.
    attribution: clientAttribution(request.headers),
  };
}
