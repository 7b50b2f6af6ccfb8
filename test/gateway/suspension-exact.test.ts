// A suspension or a revocation made by another process is seen at once on every authenticated
// route, also those that bill nothing (admission re-reads the standing of the routes that do): no
// worker serves a suspended account or a revoked key from its cache (issue 39, item 6).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

describe.each(DATABASE_KINDS)("the standing of a key on every route, on %s", (kind) => {
  let anthropic: MockUpstream;
  let gateway: TestGateway;

  beforeAll(async () => {
    anthropic = await startMockUpstream();
    anthropic.handler = (_req, res) => json(res, 200, { input_tokens: 7 });
    gateway = await startGateway(mockConfig({ openaiUrl: anthropic.url, anthropicUrl: anthropic.url }), { kind });
    // As in a process whose auth_events poll has not run yet: only its own cache stands between
    // the write and the next request.
    gateway.app.ctx.pipeline.authCache.stop();
  });
  afterAll(async () => {
    await gateway?.close();
    await anthropic?.close();
  });
  /** Every route that bills nothing, as the given key calls it: status and error type of each. */
  async function unbilledRoutes(raw: string): Promise<Array<[string, number, string | undefined]>> {
    const headers = { authorization: `Bearer ${raw}`, "content-type": "application/json" };
    const calls: Array<[string, Promise<Response>]> = [
      ["GET /v1/models", fetch(`${gateway.url}/v1/models`, { headers })],
      ["GET /v1/models/gpt-mock", fetch(`${gateway.url}/v1/models/gpt-mock`, { headers })],
      ["GET /v1/me", fetch(`${gateway.url}/v1/me`, { headers })],
      ["GET /v1/usage", fetch(`${gateway.url}/v1/usage`, { headers })],
      [
        "POST /v1/messages/count_tokens",
        fetch(`${gateway.url}/v1/messages/count_tokens`, { method: "POST", headers, body: JSON.stringify({ model: "claude-mock", messages: [{ role: "user", content: "Hi" }] }) }),
      ],
      ["GET /v1/responses/resp_x", fetch(`${gateway.url}/v1/responses/resp_x`, { headers })],
      ["GET /v1/videos/video_x", fetch(`${gateway.url}/v1/videos/video_x`, { headers })],
    ];
    const results: Array<[string, number, string | undefined]> = [];
    for (const [name, pending] of calls) {
      const response = await pending;
      const body = (await response.json()) as { error?: { type: string } };
      results.push([name, response.status, body.error?.type]);
    }
    return results;
  }

  it("a suspension is refused at once, 402 account_suspended, and a reactivation served at once", async () => {
    const { raw, account } = await gateway.createAccount();
    // Cached: every route answers as it would for an active account (404s for the made-up ids).
    for (const [name, status] of await unbilledRoutes(raw)) expect(status, name).not.toBe(402);
    anthropic.requests.length = 0;
    await gateway.app.ctx.store.accounts.setStatus(account.id, "suspended");
    for (const [name, status, type] of await unbilledRoutes(raw)) {
      expect(status, name).toBe(402);
      expect(type, name).toBe("account_suspended");
    }
    expect(anthropic.requests.filter((r) => r.url.includes("count_tokens"))).toHaveLength(0);
    await gateway.app.ctx.store.accounts.setStatus(account.id, "active");
    for (const [name, status] of await unbilledRoutes(raw)) expect(status, name).not.toBe(402);
  });

  it("a revoked key is refused at once, 401 auth_error", async () => {
    const { raw, key } = await gateway.createAccount();
    for (const [name, status] of await unbilledRoutes(raw)) expect(status, name).not.toBe(401);
    await gateway.app.ctx.store.keys.revoke(key.id);
    for (const [name, status, type] of await unbilledRoutes(raw)) {
      expect(status, name).toBe(401);
      expect(type, name).toBe("auth_error");
    }
  });
});
