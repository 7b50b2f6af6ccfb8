// What a request accumulates on its way through the pipeline, for the one log line at the end
// and for headers such as the cost. Kept as plain fields on the Fastify request.
import type { ErrorShape } from "../errors/catalogue.js";

export interface RequestMeter {
  keyId?: string;
  accountId?: string;
  model?: string;
  provider?: string;
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
