// GET / of a running gateway sends a person's browser to the dashboard (docs/dashboard.md): a 302 to
// /dashboard with the request id; the redirect is not a gateway request in the request log, and
// other methods on / stay the catalogue's 404.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";

describe("GET /", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startGateway(mockConfig({ openaiUrl: "http://127.0.0.1:9" }));
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it("redirects to /dashboard, with or without a query", async () => {
    for (const path of ["/", "/?from=bookmark"]) {
      const response = await fetch(`${gateway.url}${path}`, { redirect: "manual" });
      expect(response.status, path).toBe(302);
      expect(response.headers.get("location")).toBe("/dashboard");
      expect(response.headers.get("x-request-id")).toBeTruthy();
    }
    const followed = await fetch(`${gateway.url}/`);
    expect(followed.status).toBe(200);
    expect(followed.url).toBe(`${gateway.url}/dashboard`);
    expect(followed.headers.get("content-type")).toBe("text/html; charset=utf-8");
  });

  it("answers HEAD like GET and other methods with the catalogue's 404", async () => {
    const head = await fetch(`${gateway.url}/`, { method: "HEAD", redirect: "manual" });
    expect(head.status).toBe(302);
    expect(head.headers.get("location")).toBe("/dashboard");
    const post = await fetch(`${gateway.url}/`, { method: "POST", redirect: "manual" });
    expect(post.status).toBe(404);
    expect(((await post.json()) as { error: { type: string } }).error.type).toBe("not_found");
  });

  it("keeps the redirect out of the request log", async () => {
    await fetch(`${gateway.url}/`, { redirect: "manual" });
    const unmatched = await fetch(`${gateway.url}/no-such-path`);
    await gateway.app.ctx.pipeline.requestLog!.flush();
    const rows = await gateway.app.ctx.store.db.selectFrom("request_log").select(["route", "status"]).execute();
    expect(rows.map((r) => Number(r.status))).toEqual([unmatched.status]);
  });
});
