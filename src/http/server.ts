// The HTTP edge: request ids, the body limit, one log line per request, error rendering, routes.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { RouteContext } from "./route-context.js";
import { newRequestId } from "../core/ids.js";
import { refuseUnstorableText } from "../core/stored-text.js";
import { capConnections, clientErrorHandler, nodeServerOptions } from "./connections.js";
import { installErrorHandling } from "./error-handler.js";
import { installJsonBodyParser } from "./json-body.js";
import { errorShapeFor, recordRequest, routeOf } from "../pipeline/request-context.js";

/** A route family (health, gateway routes, dashboard): registers its routes on the server. */
export type RouteRegistrar = (app: FastifyInstance, ctx: RouteContext) => void;

/** `workers`: the processes sharing the port, each taking an equal share of the connection cap. */
export function buildServer(ctx: RouteContext, logger: Logger, routes: readonly RouteRegistrar[], workers = 1): FastifyInstance {
  const limits = ctx.config.connections;
  const app = Fastify({
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- it sets the logger type Fastify infers
    loggerInstance: logger as FastifyBaseLogger,
    // Our own one-line-per-request log replaces Fastify's two lines.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: "request_id" }),
    bodyLimit: ctx.config.bodyLimitBytes,
    genReqId: newRequestId,
    requestIdHeader: false,
    return503OnClosing: true,
    forceCloseConnections: "idle",
    // X-Forwarded-For/-Host/-Proto count only from configured proxies (request.ip, .host, .protocol).
    trustProxy: ctx.config.trustedProxies.fastifyTrustProxy(),
    // Fastify leaves Node's request timeout off (0): a client sending a byte every few seconds
    // would hold its connection forever. Responses, streams included, are not limited by these.
    http: nodeServerOptions(limits),
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    clientErrorHandler: clientErrorHandler(limits, newRequestId, logger as FastifyBaseLogger),
    // Bodies are validated with zod (admin/validate.ts) and answers written with JSON.stringify: no
    // route has a Fastify JSON schema. Fastify would otherwise load its Ajv and fast-json-stringify
    // compilers here (about 100 modules) for none; a route that is given a schema fails at start.
    schemaController: { compilersFactory: { buildValidator: noSchemaCompiler, buildSerializer: noSchemaCompiler } },
  });
  capConnections(app.server, limits, app.log, workers);
  installJsonBodyParser(app);
  app.decorateRequest("meter", null as never);
  app.decorateRequest("errorShape", "openai");
  app.decorateRequest("trace", undefined);
  app.decorateRequest("snapshot", null as never);
  // Null unless configured (decision 0018): then each request pays one check. Shared by every
  // config snapshot (a reload cannot change it), as are the metrics and the request log.
  const { tracing } = ctx.pipeline;
  const live = ctx.live;

  app.addHook("onRequest", (request, reply, done) => {
    // The config this request runs on to its end, whatever reloads meanwhile (decision 0021).
    request.snapshot = live.current;
    request.meter = { startedAt: performance.now() };
    request.errorShape = errorShapeFor(request.url);
    reply.header("x-request-id", request.id);
    if (tracing !== null) request.trace = tracing.startRequest(request.method, routeOf(request), request.headers);
    done();
  });

  // Every route's query and path, /v1 included: one answer for text the stores cannot keep (the
  // management APIs check their bodies too, src/admin and src/dashboard).
  app.addHook("preValidation", (request, _reply, done) => {
    try {
      refuseUnstorableText({ query: request.query, params: request.params });
      done();
    } catch (error) {
      done(error as Error);
    }
  });

  app.addHook("onResponse", (request, reply, done) => {
    recordRequest(request, reply.statusCode, request.snapshot.pipeline);
    done();
  });

  installErrorHandling(app);
  for (const register of routes) register(app, ctx);
  return app;
}

function noSchemaCompiler(): never {
  throw new Error("routes take no Fastify JSON schema: validate with zod (parseWith, src/admin/validate.ts)");
}
