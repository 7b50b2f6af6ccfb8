import type { FastifyInstance } from "fastify";
import type { RouteContext } from "../route-context.js";

export function registerHealthRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_request, reply) => {
    const ready = await ctx.store.ping();
    return reply.code(ready ? 200 : 503).send({ status: ready ? "ready" : "database unreachable" });
  });
}
