// The HTTP edge: request ids, the body limit, one log line per request, error rendering, routes.
import { randomBytes } from "node:crypto";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { AppContext } from "../app.js";
import { formatUsd } from "../core/money.js";
import { installErrorHandling } from "./error-handler.js";
import { errorShapeFor } from "./request-context.js";

/** A route family (health, gateway routes, dashboard): registers its routes on the server. */
export type RouteRegistrar = (app: FastifyInstance, ctx: AppContext) => void;

export function newRequestId(): string {
  return `req_${randomBytes(12).toString("hex")}`;
}

export function buildServer(ctx: AppContext, logger: Logger, routes: readonly RouteRegistrar[]): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    disableRequestLogging: true,
    bodyLimit: ctx.config.bodyLimitBytes,
    genReqId: newRequestId,
    requestIdHeader: false,
    return503OnClosing: true,
    forceCloseConnections: "idle",
    keepAliveTimeout: 65_000,
  });
  app.decorateRequest("meter", null as never);
  app.decorateRequest("errorShape", "openai");

  app.addHook("onRequest", (request, reply, done) => {
    request.meter = {};
    request.errorShape = errorShapeFor(request.url);
    reply.header("x-request-id", request.id);
    done();
  });

  app.addHook("onResponse", (request, reply, done) => {
    const m = request.meter;
    request.log.info(
      {
        request_id: request.id,
        method: request.method,
        path: request.url.split("?")[0],
        status: reply.statusCode,
        latency_ms: Math.round(reply.elapsedTime * 100) / 100,
        key: m.keyId,
        account: m.accountId,
        model: m.model,
        provider: m.provider,
        attempts: m.attempts,
        input_tokens: m.inputTokens,
        output_tokens: m.outputTokens,
        cost_usd: m.costNano === undefined ? undefined : formatUsd(m.costNano),
        error: m.errorType,
      },
      "request",
    );
    done();
  });

  installErrorHandling(app);
  for (const register of routes) register(app, ctx);
  return app;
}
