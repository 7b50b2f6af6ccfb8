// Serves the built web UI (dist/web, made by `vite build --config web/vite.config.ts`) without a
// static-file plugin: hashed assets cached for a year, index.html for every client route under
// /dashboard, no path outside the build folder, and strict security headers on the page.
import { existsSync, readFileSync, statSync } from "node:fs";
import { extname, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply } from "fastify";
import { GatewayError } from "../errors/catalogue.js";

/** dist/web at the package root: the same path from src/dashboard (tests) and dist/dashboard (build). */
export const DEFAULT_WEB_ROOT = fileURLToPath(new URL("../../dist/web/", import.meta.url));

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
};

const PAGE_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  // Invite tokens live in the URL fragment; no Referer at all is the simple guarantee.
  "referrer-policy": "no-referrer",
};

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Model Gateway</title>
<p>The dashboard UI has not been built. Run <code>npm run build</code> and restart the gateway.</p>`;

export function registerStaticRoutes(app: FastifyInstance, webRoot: string = DEFAULT_WEB_ROOT): void {
  const root = resolve(webRoot);
  const cache = new Map<string, Buffer>();

  const read = (path: string): Buffer | null => {
    const hit = cache.get(path);
    if (hit) return hit;
    if (!existsSync(path) || !statSync(path).isFile()) return null;
    const body = readFileSync(path);
    cache.set(path, body);
    return body;
  };

  const sendPage = (reply: FastifyReply) => {
    const page = read(resolve(root, "index.html"));
    reply.headers(PAGE_HEADERS).header("cache-control", "no-cache").header("content-type", TYPES[".html"]!);
    return reply.send(page ?? NOT_BUILT);
  };

  // The gateway's own address leads a person to the dashboard (a client of the API never asks for /).
  app.get("/", async (_request, reply) => reply.redirect("/dashboard", 302));
  app.get("/dashboard", async (_request, reply) => sendPage(reply));

  app.get("/dashboard/*", async (request, reply) => {
    const rest = (request.params as Record<string, string>)["*"] ?? "";
    // Unknown API paths are API 404s, never the HTML page.
    if (rest === "api" || rest.startsWith("api/")) throw new GatewayError("not_found", `no route GET /dashboard/${rest.split("?")[0]}`);
    let decoded: string;
    try {
      decoded = decodeURIComponent(rest);
    } catch {
      throw new GatewayError("not_found", "no such file");
    }
    const ext = extname(decoded);
    if (!ext) return sendPage(reply); // a client-side route: the app decides what to show
    const path = resolve(root, decoded);
    if (decoded.includes("\0") || !path.startsWith(root + sep)) throw new GatewayError("not_found", "no such file");
    const body = read(path);
    if (!body) throw new GatewayError("not_found", `no file /dashboard/${decoded}`);
    if (ext === ".html") reply.headers(PAGE_HEADERS);
    // Vite puts content hashes in every file name under assets/: safe to cache forever.
    const cacheControl = decoded.startsWith("assets/") ? "public, max-age=31536000, immutable" : "public, max-age=3600";
    return reply
      .header("content-type", TYPES[ext] ?? "application/octet-stream")
      .header("cache-control", cacheControl)
      .header("x-content-type-options", "nosniff")
      .send(body);
  });
}
