// The HTTP edge: request ids, the body limit, one log line per request, error rendering, routes.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { AppContext } from "../app.js";
import { randomText } from "../core/ids.js";
import { installErrorHandling } from "./error-handler.js";
import { errorShapeFor, requestLogLine } from "./request-context.js";

/** A route family (health, gateway routes, dashboard): registers its routes on the server. */
export type RouteRegistrar = (app: FastifyInstance, ctx: AppContext) => void;

/** A request id, `req_` + 24 hex digits (12 random bytes from the shared pool, see core/ids.ts). */
export function newRequestId(): string {
  return `req_${randomText(12, "hex")}`;
}

export function buildServer(ctx: AppContext, logger: Logger, routes: readonly RouteRegistrar[]): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // Our own one-line-per-request log replaces Fastify's two lines.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: "request_id" }),
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
    request.meter = { startedAt: performance.now() };
    request.errorShape = errorShapeFor(request.url);
    reply.header("x-request-id", request.id);
    done();
  });

  app.addHook("onResponse", (request, reply, done) => {
    request.log.info(requestLogLine(request, reply.statusCode), "request");
    done();
  });

  installErrorHandling(app);
  for (const register of routes) register(app, ctx);
  return app;
}
