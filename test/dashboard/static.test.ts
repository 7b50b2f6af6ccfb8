// The web UI is served by the gateway itself: the page for every client route, hashed assets
// cached for a year, security headers, no way out of the build folder, API 404s stay JSON.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installErrorHandling } from "../../src/http/error-handler.js";
import { registerStaticRoutes } from "../../src/dashboard/static-files.js";

describe("dashboard static files", () => {
  let app: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    const root = mkdtempSync(join(tmpdir(), "gw-web-"));
    const web = join(root, "web");
    mkdirSync(join(web, "assets"), { recursive: true });
    writeFileSync(join(web, "index.html"), "<!doctype html><title>UI</title>");
    writeFileSync(join(web, "assets", "index-abc123.js"), "console.log(1)");
    writeFileSync(join(web, "assets", "index-abc123.css"), "body{}");
    writeFileSync(join(web, "favicon.svg"), "<svg/>");
    writeFileSync(join(root, "secret.txt"), "do not serve");
    app = Fastify();
    app.decorateRequest("meter", null as never);
    app.decorateRequest("errorShape", "openai");
    app.addHook("onRequest", async (request) => {
      request.meter = { startedAt: 0 };
    });
    installErrorHandling(app);
    registerStaticRoutes(app, web);
    base = await app.listen({ host: "127.0.0.1", port: 0 });
  });
  afterAll(async () => {
    await app?.close();
  });

  it("serves index.html with security headers for /dashboard and client routes", async () => {
    for (const path of ["/dashboard", "/dashboard/", "/dashboard/keys", "/dashboard/workspaces/ws_1", "/dashboard/invite"]) {
      const response = await fetch(`${base}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(response.headers.get("cache-control")).toBe("no-cache");
      expect(response.headers.get("content-security-policy")).toContain("default-src 'self'");
      expect(response.headers.get("x-frame-options")).toBe("DENY");
      expect(response.headers.get("referrer-policy")).toBe("no-referrer");
      expect(await response.text()).toContain("<title>UI</title>");
    }
  });

  it("serves hashed assets with their content type and a long cache lifetime", async () => {
    const js = await fetch(`${base}/dashboard/assets/index-abc123.js`);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect((await fetch(`${base}/dashboard/assets/index-abc123.css`)).headers.get("content-type")).toBe("text/css; charset=utf-8");
    const icon = await fetch(`${base}/dashboard/favicon.svg`);
    expect(icon.headers.get("content-type")).toBe("image/svg+xml");
    expect(icon.headers.get("cache-control")).toBe("public, max-age=3600");
  });

  it("never leaves the build folder and keeps unknown API paths as JSON 404s", async () => {
    for (const path of [
      "/dashboard/../secret.txt",
      "/dashboard/%2e%2e/secret.txt",
      "/dashboard/assets/%2e%2e/%2e%2e/secret.txt",
      "/dashboard/..%2fsecret.txt",
      "/dashboard/assets/missing.js",
    ]) {
      const response = await fetch(`${base}${path}`);
      const text = await response.text();
      expect(text, path).not.toContain("do not serve");
      if (response.status !== 404) expect(text, path).toContain("<title>UI</title>");
    }
    const missing = await fetch(`${base}/dashboard/assets/missing.js`);
    expect(missing.status).toBe(404);
    const api = await fetch(`${base}/dashboard/api/nothing-here`);
    expect(api.status).toBe(404);
    expect(((await api.json()) as { error: { type: string } }).error.type).toBe("not_found");
  });
});
