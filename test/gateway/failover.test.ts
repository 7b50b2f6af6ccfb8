// Failover across upstream keys: every combination of 429, no response and success, buffered and
// streamed; failed attempts cost nothing; an account's own keys replace the shared ones.
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { chatCompletion, chatStream, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";

const KEYS = ["sk-mock-key-aaaaaaaaaaaa", "sk-mock-key-bbbbbbbbbbbb", "sk-mock-key-cccccccccccc"];

describe("failover", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let client: OpenAI;
  let accountId: string;

  beforeEach(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, openaiKeys: KEYS }));
    const created = await gateway.createAccount({ balance: "10" });
    accountId = created.account.id;
    client = new OpenAI({ apiKey: created.raw, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  });
  afterEach(async () => {
    await gateway.close();
    await mock.close();
  });

  const ask = () => client.chat.completions.create({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }] }).withResponse();
  const ledgerRows = () => gateway.app.ctx.store.db.selectFrom("ledger").selectAll().where("account_id", "=", accountId).where("kind", "=", "usage").execute();
  const account = () => gateway.app.ctx.store.accounts.get(accountId);

  it("429 then 200: moves to the next key, reports the attempts, charges once", async () => {
    mock.handler = (_req, res) =>
      mock.requests.length === 1 ? json(res, 429, { error: { message: "slow down" } }, { "retry-after": "30" }) : json(res, 200, chatCompletion("ok"));
    const { data, response } = await ask();
    expect(data.choices[0]!.message.content).toBe("ok");
    expect(response.headers.get("x-gateway-attempts")).toBe("2");
    expect(mock.requests[0]!.key).not.toBe(mock.requests[1]!.key);
    const rows = await ledgerRows();
    expect(rows).toHaveLength(1);
    // The ledger row records the attempts, and GET /v1/requests/{id} shows them.
    expect(rows[0]!.attempts).toBe(2n);
    const record = await fetch(`${gateway.url}/v1/requests/${response.headers.get("x-request-id")}`, { headers: { authorization: `Bearer ${client.apiKey}` } });
    expect(((await record.json()) as { attempts: number }).attempts).toBe(2);
    // The key that answered 429 cools down for its Retry-After: the next requests avoid it.
    const cooled = mock.requests[0]!.key;
    mock.requests.length = 0;
    for (let i = 0; i < 4; i++) await ask();
    expect(mock.requests.map((r) => r.key)).not.toContain(cooled);
  });

  it("rotates the first key across requests to spread load", async () => {
    mock.handler = (_req, res) => json(res, 200, chatCompletion("ok"));
    for (let i = 0; i < 6; i++) await ask();
    expect(new Set(mock.requests.map((r) => r.key))).toEqual(new Set(KEYS));
  });

  it("connection reset then 200: moves to the next key", async () => {
    mock.handler = (_req, res) => {
      if (mock.requests.length === 1) res.socket!.destroy();
      else json(res, 200, chatCompletion("ok"));
    };
    const { response } = await ask();
    expect(response.headers.get("x-gateway-attempts")).toBe("2");
  });

  it("all keys 429: 429 rate_limit_error with the upstream's Retry-After, nothing charged", async () => {
    mock.handler = (_req, res) => json(res, 429, { error: { message: "limit" } }, { "retry-after": "7" });
    const before = await account();
    const error = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.RateLimitError>;
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.headers?.get("retry-after")).toBe("7");
    expect((error.error as { type: string }).type).toBe("rate_limit_error");
    expect(error.headers?.get("x-request-id")).toMatch(/^req_/);
    expect(error.headers?.get("x-gateway-attempts")).toBe("3");
    expect(mock.requests).toHaveLength(3);
    expect(await ledgerRows()).toHaveLength(0);
    const after = await account();
    expect(after!.balance).toBe(before!.balance);
    expect(after!.held).toBe(0n);
    // Every key is cooling down now: refused at once, with the time left, without calling upstream.
    const again = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.RateLimitError>;
    expect(again).toBeInstanceOf(OpenAI.RateLimitError);
    expect(Number(again.headers?.get("retry-after"))).toBeGreaterThan(0);
    expect(mock.requests).toHaveLength(3);
  });

  it("all keys without a response: 502 provider_error, nothing charged", async () => {
    mock.handler = (_req, res) => {
      res.socket!.destroy();
    };
    const error = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(502);
    expect((error.error as { type: string }).type).toBe("provider_error");
    expect(mock.requests).toHaveLength(3);
    expect(await ledgerRows()).toHaveLength(0);
    expect((await account())!.held).toBe(0n);
  });

  it("a refused connection counts as no response", async () => {
    const deadUrl = mock.url;
    await mock.close();
    await gateway.close();
    mock = await startMockUpstream();
    gateway = await startGateway(mockConfig({ openaiUrl: deadUrl, openaiKeys: KEYS }));
    const created = await gateway.createAccount();
    accountId = created.account.id;
    const dead = new OpenAI({ apiKey: created.raw, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const error = (await dead.chat.completions.create({ model: "gpt-mock", messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e)) as InstanceType<
      typeof OpenAI.APIError
    >;
    expect(error.status).toBe(502);
    expect((error.error as { type: string; message: string }).message).not.toContain(deadUrl.replace("http://", ""));
  });

  it("mixed 429 and no response: 429 rate_limit_error (retrying later can succeed)", async () => {
    mock.handler = (_req, res) => {
      if (mock.requests.length === 2) json(res, 429, { error: { message: "limit" } }, { "retry-after": "3" });
      else res.socket!.destroy();
    };
    const error = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.RateLimitError>;
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.headers?.get("retry-after")).toBe("3");
    expect(mock.requests).toHaveLength(3);
  });

  it("other upstream errors are returned, mapped and scrubbed, without trying more keys", async () => {
    mock.handler = (_req, res) => json(res, 400, { error: { message: `bad parameter for key ${KEYS[0]} at ${mock.url}` } });
    const error = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error.error as { type: string }).type).toBe("invalid_request");
    const message = (error.error as { message: string }).message;
    expect(message).toContain("bad parameter");
    expect(message).not.toContain(KEYS[0]);
    expect(message).not.toContain(mock.host);
    expect(mock.requests).toHaveLength(1);
    mock.handler = (_req, res) => json(res, 500, { error: { message: "boom" } });
    const serverError = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(serverError.status).toBe(502);
    expect((serverError.error as { type: string }).type).toBe("provider_error");
  });

  it("streams fail over until the first byte reaches the client", async () => {
    mock.handler = (req, res) => {
      if (mock.requests.length === 1) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.flushHeaders();
        setTimeout(() => res.socket!.destroy(), 20);
        return;
      }
      return chatStream(req, res, ["after ", "failover"]);
    };
    const stream = await client.chat.completions.create({ model: "gpt-mock", messages: [{ role: "user", content: "x" }], stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
    expect(text).toBe("after failover");
    expect(mock.requests).toHaveLength(2);
    expect(await ledgerRows()).toHaveLength(1);
  });

  it("uses the account's own keys for a provider instead of the shared ones", async () => {
    await gateway.app.ctx.store.upstreamKeys.add({ accountId, provider: "mockai", key: "sk-own-account-key-123456" });
    gateway.app.ctx.pipeline.upstreamKeys.invalidate(accountId);
    mock.handler = (_req, res) => json(res, 200, chatCompletion("mine"));
    await ask();
    await ask();
    expect(mock.requests.map((r) => r.key)).toEqual(["sk-own-account-key-123456", "sk-own-account-key-123456"]);
  });
});
