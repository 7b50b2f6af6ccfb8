// Where GET /metrics is served (docs/operations.md#metrics): on the main listener to a request with
// the configured bearer token (401 from the catalogue otherwise), and/or on a separate listener
// (metrics.listen) that serves nothing else, where the token is asked only when one is configured.
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { GatewayError } from "../../errors/catalogue.js";
import type { RouteContext } from "../route-context.js";
import type { GatewayMetrics } from "../../observability/metrics.js";

const digest = (text: string) => createHash("sha256").update(text).digest();

/** True when the Authorization header carries the token (compared in constant time). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer +(\S+)\s*$/i.exec(header ?? "");
  return match !== null && timingSafeEqual(digest(match[1]!), digest(token));
}

/** GET /metrics on the main listener, when metrics.token_env is configured. */
export function registerMetricsRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const metrics = ctx.pipeline.metrics;
  const token = metrics?.settings.token ?? null;
  if (metrics === null || token === null) return;
  app.get("/metrics", async (request, reply) => {
    if (!bearerMatches(request.headers.authorization, token)) {
      throw new GatewayError("auth_error", "GET /metrics needs the metrics bearer token.", { headers: { "www-authenticate": 'Bearer realm="metrics"' } });
    }
    const text = await metrics.expose();
    return reply.header("content-type", metrics.contentType).header("cache-control", "no-store").send(text);
  });
}

/** The separate metrics listener (metrics.listen); resolves once it listens. */
export async function startMetricsListener(metrics: GatewayMetrics, address: { host: string; port: number }, logger: Logger): Promise<{ server: Server; url: string }> {
  const token = metrics.settings.token;
  const server = createServer((req: IncomingMessage, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { type: "not_found", message: "Only GET /metrics is served here." } }));
      return;
    }
    if (token !== null && !bearerMatches(req.headers.authorization, token)) {
      res
        .writeHead(401, { "content-type": "application/json", "www-authenticate": 'Bearer realm="metrics"' })
        .end(JSON.stringify({ error: { type: "auth_error", message: "GET /metrics needs the metrics bearer token." } }));
      return;
    }
    metrics.expose().then(
      (text) => res.writeHead(200, { "content-type": metrics.contentType, "cache-control": "no-store" }).end(req.method === "HEAD" ? undefined : text),
      (err: unknown) => {
        logger.warn({ err }, "collecting metrics failed");
        res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { type: "internal_error", message: "Internal error." } }));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(address.port, address.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const host = bound.family === "IPv6" ? `[${bound.address}]` : bound.address;
  return { server, url: `http://${host}:${bound.port}` };
}
