// GET /openapi.json: the OpenAPI 3.1 document, built on the first request and then served from
// memory (generating it walks every schema; no request pays that but the first). Its modules (the
// operation table and the response schemas) are loaded then too, not before the gateway is ready.
import type { FastifyInstance } from "fastify";
import { readFileSync } from "node:fs";

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version : "0.0.0";
  } catch {
    return "0.0.0";
  }
}

export function registerOpenApiRoutes(app: FastifyInstance): void {
  let body: string | null = null;
  app.get("/openapi.json", async (_request, reply) => {
    body ??= JSON.stringify((await import("./document.js")).buildOpenApiDocument(packageVersion()));
    return reply.header("content-type", "application/json; charset=utf-8").header("cache-control", "public, max-age=300").send(body);
  });
}
