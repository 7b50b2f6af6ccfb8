// Each error row of the core issue, with status, catalogue type and X-Request-ID, and the order of checks.
import OpenAI from "openai";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { requestWithRawHeaders } from "../support/raw-client.js";

const CHAT = { model: "gpt-mock", messages: [{ role: "user", content: "Hi" }] };

describe("error contract", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("fine"));
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }).replace("server:\n  default_tier: standard", "server:\n  default_tier: standard\n  body_limit_mb: 1"));
    key = (await gateway.createAccount()).raw;
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });
  beforeEach(() => {
    mock.requests.length = 0;
  });

  async function post(path: string, body: string | object, headers: Record<string, string> = { authorization: `Bearer ${key}` }) {
    const response = await fetch(`${gateway.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: JSON.parse(text) as { error: { type: string; param: string | null; message: string }; request_id: string } };
  }

  function expectError(result: Awaited<ReturnType<typeof post>>, status: number, type: string) {
    expect(result.status).toBe(status);
    expect(result.body.error.type).toBe(type);
    const id = result.headers.get("x-request-id");
    expect(id).toMatch(/^req_[0-9a-f]{32}$/);
    // Time first: the id starts with the request's time in ms.
    expect(Math.abs(Number.parseInt(id!.slice(4, 16), 16) - Date.now())).toBeLessThan(60_000);
    expect(result.body.request_id).toBe(id);
  }

  it("401 auth_error: missing, malformed, unknown and revoked keys, in both header forms", async () => {
    expectError(await post("/v1/chat/completions", CHAT, {}), 401, "auth_error");
    expectError(await post("/v1/chat/completions", CHAT, { authorization: "Bearer not-a-key" }), 401, "auth_error");
    expectError(await post("/v1/chat/completions", CHAT, { authorization: "Basic abc" }), 401, "auth_error");
    expectError(await post("/v1/chat/completions", CHAT, { "x-api-key": `mgw_${"A".repeat(43)}` }), 401, "auth_error");
    const { raw, key: apiKey } = await gateway.createAccount();
    expect((await post("/v1/chat/completions", CHAT, { "x-api-key": raw })).status).toBe(200);
    await gateway.app.ctx.store.keys.revoke(apiKey.id);
    gateway.app.ctx.pipeline.authCache.invalidateKey(apiKey.hash);
    expectError(await post("/v1/chat/completions", CHAT, { "x-api-key": raw }), 401, "auth_error");
    expect(mock.requests).toHaveLength(1);
  });

  it("401 auth_error when Authorization and x-api-key carry different keys; the same key in both is fine", async () => {
    const a = await gateway.createAccount();
    const b = await gateway.createAccount();
    const both = { authorization: `Bearer ${a.raw}`, "x-api-key": b.raw };
    const chat = await post("/v1/chat/completions", CHAT, both);
    expectError(chat, 401, "auth_error");
    expect(chat.body.error.message).toMatch(/different credentials/);
    const messages = await post("/v1/messages", { model: "claude-mock", max_tokens: 10, messages: [{ role: "user", content: "Hi" }] }, both);
    expectError(messages, 401, "auth_error");
    expect(messages.body).toMatchObject({ type: "error", error: { type: "auth_error", message: expect.stringMatching(/different credentials/) } });
    expect(mock.requests).toHaveLength(0);
    for (const { account } of [a, b]) expect((await gateway.app.ctx.store.accounts.get(account.id))!.totalSpent).toBe(0n);
    expect((await post("/v1/chat/completions", CHAT, { authorization: `Bearer ${a.raw}`, "x-api-key": a.raw })).status).toBe(200);
  });

  it("401 auth_error for a credential header sent twice, before anything is forwarded or held", async () => {
    const other = await gateway.createAccount();
    const body = JSON.stringify(CHAT);
    const cases: Array<{ method: string; path: string; headers: Array<[string, string]> }> = [
      {
        method: "POST",
        path: "/v1/chat/completions",
        headers: [
          ["Authorization", `Bearer ${key}`],
          ["authorization", `Bearer ${other.raw}`],
        ],
      },
      {
        method: "POST",
        path: "/v1/chat/completions",
        headers: [
          ["Authorization", `Bearer ${key}`],
          ["Authorization", `Bearer ${key}`],
        ],
      },
      {
        method: "POST",
        path: "/v1/chat/completions",
        headers: [
          ["x-api-key", key],
          ["X-Api-Key", other.raw],
        ],
      },
      {
        method: "GET",
        path: "/v1/models",
        headers: [
          ["authorization", `Bearer ${other.raw}`],
          ["authorization", `Bearer ${key}`],
        ],
      },
    ];
    for (const { method, path, headers } of cases) {
      const answer = await requestWithRawHeaders(`${gateway.url}${path}`, method, headers, method === "POST" ? body : undefined);
      expect(answer.status).toBe(401);
      expect(answer.body.error?.type).toBe("auth_error");
      expect(answer.body.error?.message).toMatch(/sent 2 times/);
      expect(answer.requestId).toBeTruthy();
    }
    expect(mock.requests).toHaveLength(0);
    expect((await gateway.app.ctx.store.accounts.get(other.account.id))!.totalSpent).toBe(0n);
    // One header each, the same key: served.
    const single = await requestWithRawHeaders(`${gateway.url}/v1/chat/completions`, "POST", [["Authorization", `Bearer ${key}`]], body);
    expect(single.status).toBe(200);
  });

  it("a revoke in another process takes effect within a second (auth_events)", async () => {
    const { raw, key: apiKey } = await gateway.createAccount();
    expect((await post("/v1/chat/completions", CHAT, { authorization: `Bearer ${raw}` })).status).toBe(200);
    // Revoked through the store only, as another gateway process would: no in-process invalidation.
    await gateway.app.ctx.store.keys.revoke(apiKey.id);
    await new Promise((r) => setTimeout(r, 1000));
    expectError(await post("/v1/chat/completions", CHAT, { authorization: `Bearer ${raw}` }), 401, "auth_error");
  });

  it("402 account_suspended for suspended and closed accounts, before anything goes upstream", async () => {
    for (const status of ["suspended", "closed"] as const) {
      const { raw, account } = await gateway.createAccount();
      await gateway.app.ctx.store.accounts.setStatus(account.id, status);
      gateway.app.ctx.pipeline.authCache.invalidateAccount(account.id);
      expectError(await post("/v1/chat/completions", CHAT, { authorization: `Bearer ${raw}` }), 402, "account_suspended");
    }
    expect(mock.requests).toHaveLength(0);
  });

  it("404 not_found for an unknown path and an unknown model", async () => {
    expectError(await post("/v1/nothing-here", CHAT), 404, "not_found");
    const unknown = await post("/v1/chat/completions", { ...CHAT, model: "no-such-model" });
    expectError(unknown, 404, "not_found");
    expect(unknown.body.error.param).toBe("model");
  });

  it("400 not_supported for a model outside the key's tier", async () => {
    expectError(await post("/v1/chat/completions", { ...CHAT, model: "premium-mock" }), 400, "not_supported");
    const premium = await gateway.createAccount({ tier: "premium" });
    expect((await post("/v1/chat/completions", { ...CHAT, model: "premium-mock" }, { authorization: `Bearer ${premium.raw}` })).status).toBe(200);
  });

  it("an unknown model says how to list the key's models and suggests the nearest one the key may use", async () => {
    const typo = await post("/v1/chat/completions", { ...CHAT, model: "gpt-mokc" });
    expectError(typo, 404, "not_found");
    expect(typo.body.error.message).toContain("GET /v1/models lists the models this key can use.");
    expect(typo.body.error.message).toContain("Did you mean gpt-mock?");
    // premium-mock is not in this key's tier: never suggested, never named.
    const outOfTier = await post("/v1/chat/completions", { ...CHAT, model: "premium-mokc" });
    expectError(outOfTier, 404, "not_found");
    expect(outOfTier.body.error.message).not.toContain("Did you mean");
    const listed = await fetch(`${gateway.url}/v1/models/gpt-mokc`, { headers: { authorization: `Bearer ${key}` } });
    expect(listed.status).toBe(404);
    expect(((await listed.json()) as { error: { message: string } }).error.message).toContain("Did you mean gpt-mock?");
  });

  it("a suspended account's refusal says who can reactivate it", async () => {
    const { raw, account } = await gateway.createAccount();
    await gateway.app.ctx.store.accounts.setStatus(account.id, "suspended");
    const refused = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${raw}` } });
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/suspended: .*an administrator of this gateway reactivates it/);
  });

  it("400 invalid_request naming the field", async () => {
    const broken = await post("/v1/chat/completions", "{not json");
    expectError(broken, 400, "invalid_request");
    expect(broken.body.error.param).toBe("body");
    // The place, named once, and what was expected there.
    expect(broken.body.error.message).toBe("The body is not valid JSON: at line 1, column 2, expected a property name in double quotes.");
    const trailing = await post("/v1/chat/completions", '{\n  "model": "gpt-mock",\n  "messages": [],\n}');
    expect(trailing.body.error.message).toBe("The body is not valid JSON: at line 4, column 1, expected a property name in double quotes.");
    const noMessages = await post("/v1/chat/completions", { model: "gpt-mock" });
    expectError(noMessages, 400, "invalid_request");
    expect(noMessages.body.error.param).toBe("messages");
    const badStream = await post("/v1/chat/completions", { ...CHAT, stream: "yes" });
    expect(badStream.body.error.param).toBe("stream");
    const badMax = await post("/v1/chat/completions", { ...CHAT, max_tokens: -1 });
    expect(badMax.body.error.param).toBe("max_tokens");
    const noModel = await post("/v1/chat/completions", { messages: CHAT.messages });
    expect(noModel.body.error.param).toBe("model");
    const array = await post("/v1/chat/completions", "[1,2]");
    expectError(array, 400, "invalid_request");
    expect(mock.requests).toHaveLength(0);
  });

  it("413 payload_too_large, also for a chunked body with no length, detected while reading", async () => {
    const big = JSON.stringify({ ...CHAT, messages: [{ role: "user", content: "x".repeat(1_100_000) }] });
    expectError(await post("/v1/chat/completions", big), 413, "payload_too_large");
    const chunked = await new Promise<{ status: number; body: string; requestId: string | undefined }>((resolve, reject) => {
      const url = new URL(`${gateway.url}/v1/chat/completions`);
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "transfer-encoding": "chunked" },
        },
        (res) => {
          let body = "";
          res.on("data", (c: Buffer) => (body += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode!, body, requestId: res.headers["x-request-id"] as string | undefined }));
        },
      );
      req.on("error", reject);
      // Keep sending well past the limit; the gateway answers once the limit is crossed.
      let sent = 0;
      const pump = () => {
        while (sent < 3_000_000) {
          sent += 64 * 1024;
          if (!req.write("y".repeat(64 * 1024))) return void req.once("drain", pump);
        }
        req.end();
      };
      req.write('{"model":"gpt-mock","messages":[{"role":"user","content":"');
      pump();
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body).error.type).toBe("payload_too_large");
    expect(chunked.requestId).toMatch(/^req_/);
  });

  it("checks auth before account status, status before body size, size before JSON", async () => {
    const big = "x".repeat(1_200_000);
    expectError(await post("/v1/chat/completions", big, {}), 401, "auth_error");
    const { raw, account } = await gateway.createAccount();
    await gateway.app.ctx.store.accounts.setStatus(account.id, "suspended");
    gateway.app.ctx.pipeline.authCache.invalidateAccount(account.id);
    expectError(await post("/v1/chat/completions", big, { authorization: `Bearer ${raw}` }), 402, "account_suspended");
    expectError(await post("/v1/chat/completions", big), 413, "payload_too_large");
    expectError(await post("/v1/chat/completions", "{oops"), 400, "invalid_request");
    expectError(await post("/v1/chat/completions", { model: "no-such-model" }), 400, "invalid_request");
    expectError(await post("/v1/chat/completions", { model: "no-such-model", messages: CHAT.messages }), 404, "not_found");
  });

  it("500 internal_error with a generic body when scrubbing fails, and not one upstream byte", async () => {
    mock.handler = (_req, res) => json(res, 200, chatCompletion("UPSTREAM-SECRET-CONTENT"));
    const services = gateway.app.ctx.pipeline;
    const original = services.scrubber;
    services.scrubber = {
      scrubText: () => {
        throw new Error("scrubber broke");
      },
      scrubJson: () => {
        throw new Error("scrubber broke");
      },
      isCleanJsonText: () => {
        throw new Error("scrubber broke");
      },
    };
    try {
      const client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
      const error = await client.chat.completions.create({ model: "gpt-mock", messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      const result = await post("/v1/chat/completions", CHAT);
      expectError(result, 500, "internal_error");
      expect(JSON.stringify(result.body)).not.toContain("UPSTREAM-SECRET-CONTENT");
      expect(result.body.error.message).toBe("Internal error.");
    } finally {
      services.scrubber = original;
    }
  });

  it("500 internal_error for a stream whose first event cannot be scrubbed: no 200, no upstream byte", async () => {
    const { raw, account } = await gateway.createAccount({ balance: "1" });
    mock.handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(
        `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "UPSTREAM-STREAM-CONTENT" }, finish_reason: null }] })}\n\ndata: [DONE]\n\n`,
      );
    };
    const services = gateway.app.ctx.pipeline;
    const original = services.scrubber;
    const broken = () => {
      throw new Error("scrubber broke");
    };
    services.scrubber = { scrubText: broken, scrubJson: broken, isCleanJsonText: broken };
    try {
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
        body: JSON.stringify({ ...CHAT, stream: true }),
      });
      const text = await response.text();
      expect(response.status).toBe(500);
      expect(JSON.parse(text)).toMatchObject({ error: { type: "internal_error", message: "Internal error." }, request_id: response.headers.get("x-request-id") });
      expect(text).not.toContain("UPSTREAM-STREAM-CONTENT");
    } finally {
      services.scrubber = original;
    }
    // Nothing reached the client, so nothing is charged and the hold is given back.
    const after = await gateway.app.ctx.store.accounts.get(account.id);
    expect(after!.held).toBe(0n);
    expect(await gateway.app.ctx.store.ledger.count(account.id)).toBe(1); // the opening balance's credit only
  });

  it("errors carry X-Request-ID in the OpenAI SDK too", async () => {
    const client = new OpenAI({ apiKey: "mgw_bad", baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const error = (await client.models.list().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.AuthenticationError>;
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error.headers?.get("x-request-id")).toMatch(/^req_/);
    expect((error.error as { type: string }).type).toBe("auth_error");
  });
});
