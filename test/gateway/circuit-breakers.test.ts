// Circuit breakers per upstream key, through the gateway: a failing key stops receiving requests once
// its breaker opens, gets one trial after the open period, and every key open fails fast. Client
// errors (4xx) do not count against a key.
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { keyFingerprint } from "../../src/upstreams/upstream-health.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

const BAD = "sk-mock-key-bad-aaaaaaaa";
const GOOD = "sk-mock-key-good-bbbbbbb";
const HEALTH = `
upstream_health:
  window_ms: 30000
  min_requests: 4
  failure_threshold: 0.5
  open_ms: 1000
  half_open_trials: 1
`;

describe("circuit breakers", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let client: OpenAI;

  const start = async (keys: string[]) => {
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, openaiKeys: keys, extra: HEALTH }));
    const created = await gateway.createAccount({ balance: "10" });
    client = new OpenAI({ apiKey: created.raw, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  };
  const ask = () => client.chat.completions.create({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }] }).withResponse();
  const keysSeen = () => mock.requests.map((r) => (r.key === BAD ? "bad" : "good"));

  beforeEach(async () => {
    mock = await startMockUpstream();
  });
  afterEach(async () => {
    await gateway.close();
    await mock.close();
  });

  it("a key answering 500 is skipped once its breaker opens; after the open period one trial reaches it", async () => {
    await start([BAD, GOOD]);
    mock.handler = (req, res) => (req.key === BAD ? json(res, 500, { error: { message: "boom" } }) : json(res, 200, chatCompletion("ok")));
    // Rotation alternates the first key: 8 requests send 4 to the bad key, which opens its breaker.
    for (let i = 0; i < 8; i++) await ask().catch(() => undefined);
    expect(keysSeen().filter((k) => k === "bad")).toHaveLength(4);
    mock.requests.length = 0;
    for (let i = 0; i < 10; i++) {
      const { response } = await ask();
      expect(response.status).toBe(200);
      expect(response.headers.get("x-gateway-attempts")).toBe("1");
    }
    expect(keysSeen()).toEqual(Array(10).fill("good"));
    const row = await gateway.app.ctx.store.db
      .selectFrom("upstream_health")
      .selectAll()
      .where("scope", "=", `key:${keyFingerprint("mockai", BAD)}`)
      .executeTakeFirst();
    expect(row?.state).toBe("open");
    // The window behind it, as the status command shows it (written every few seconds; here at once).
    await gateway.app.ctx.pipeline.health.writeWindows();
    const window = await gateway.app.ctx.store.upstreamHealth.all();
    expect(window.find((w) => w.scope === row!.scope)).toMatchObject({ requests: 4, failures: 4 });
    expect(window.find((w) => w.scope === `key:${keyFingerprint("mockai", GOOD)}`)).toMatchObject({ state: "closed", failures: 0 });

    await new Promise((resolve) => setTimeout(resolve, 1_100));
    mock.requests.length = 0;
    for (let i = 0; i < 6; i++) await ask().catch(() => undefined);
    // One trial (it failed: open again), the rest on the good key.
    expect(keysSeen().filter((k) => k === "bad")).toHaveLength(1);
  });

  it("a key resetting connections stops costing an attempt once its breaker opens, and a trial success closes it", async () => {
    await start([BAD, GOOD]);
    let badIsDown = true;
    mock.handler = (req, res) => {
      if (req.key === BAD && badIsDown) res.socket!.destroy();
      else json(res, 200, chatCompletion("ok"));
    };
    for (let i = 0; i < 8; i++) expect((await ask()).response.status).toBe(200);
    mock.requests.length = 0;
    for (let i = 0; i < 6; i++) expect((await ask()).response.headers.get("x-gateway-attempts")).toBe("1");
    expect(keysSeen()).toEqual(Array(6).fill("good"));

    badIsDown = false;
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    mock.requests.length = 0;
    for (let i = 0; i < 6; i++) await ask();
    expect(keysSeen().filter((k) => k === "bad")).toHaveLength(3); // closed again: rotation resumes
  });

  it("every key open: 502 provider_error at once with a Retry-After, without calling upstream", async () => {
    await start([BAD]);
    mock.handler = (_req, res) => {
      res.socket!.destroy();
    };
    for (let i = 0; i < 4; i++) await ask().catch(() => undefined);
    mock.requests.length = 0;
    const error = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(502);
    expect((error.error as { type: string }).type).toBe("provider_error");
    expect(Number(error.headers?.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(mock.requests).toHaveLength(0);
  });

  it("client errors (4xx) do not open a breaker", async () => {
    await start([BAD]);
    mock.handler = (_req, res) => json(res, 400, { error: { message: "bad parameter" } });
    for (let i = 0; i < 8; i++) await ask().catch(() => undefined);
    expect(mock.requests).toHaveLength(8);
  });
});
