import type { FastifyInstance } from "fastify";
import type { RouteContext } from "../route-context.js";

export function registerHealthRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (request, reply) => {
    const ready = await ctx.store.ping();
    // The config serving: its version (the file's SHA-256) and when it was loaded, so that an operator sees a reload take effect.
    const { config, loadedAt } = request.snapshot;
    return reply
      .code(ready ? 200 : 503)
      .send({ status: ready ? "ready" : "database unreachable", config: { version: config.version, loaded_at: new Date(loadedAt).toISOString() } });
  });
}
