// GET /metrics after a scripted mix of requests (success, 4xx, 429 with failover to the second key,
// a stream, a client abort mid-stream), on SQLite and PostgreSQL: each counter and histogram holds
// the expected values, money and tokens agree exactly with the ledger, the exposition parses, and
// the endpoint refuses requests without the token. Then the separate listener and the per-account opt-in.
import { afterEach, describe, expect, it } from "vitest";
import { chatCompletion, chatStream, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { mediaConfig } from "../media/support.js";
import { histogramOf, parseExposition, seriesOf, valueOf, type Families } from "../support/prometheus.js";

const KEYS = ["sk-mock-key-aaaaaaaaaaaa", "sk-mock-key-bbbbbbbbbbbb"];
const TOKEN = "metrics-token-0123456789abcdef";
const ROUTE = "/v1/chat/completions";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let mock: MockUpstream | undefined;
let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  await mock?.close();
  gateway = undefined;
  mock = undefined;
});

async function scrape(url: string, token: string | null = TOKEN): Promise<Families> {
  const response = await fetch(`${url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain");
  return parseExposition(await response.text());
}

function chat(raw: string, body: Record<string, unknown>, signal?: AbortSignal) {
  return fetch(`${gateway!.url}${ROUTE}`, {
    method: "POST",
    headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], ...body }),
    ...(signal && { signal }),
  });
}

describe.each(["sqlite", "postgres"] as const)("GET /metrics (%s)", (kind) => {
  it("counts a scripted mix of requests exactly, and agrees with the ledger", async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(`${mockConfig({ openaiUrl: mock.url, openaiKeys: KEYS })}\nmetrics:\n  token_env: GW_TEST_METRICS_TOKEN\n`, {
      kind,
      env: { GW_TEST_METRICS_TOKEN: TOKEN },
    });
    const { raw, account } = await gateway.createAccount({ balance: "10" });

    // Without the token, or with a wrong one: 401 in the catalogue's shape, with the request id.
    const attempts: Array<Record<string, string>> = [{}, { authorization: "Bearer wrong-token-0123456789" }, { authorization: TOKEN }];
    for (const headers of attempts) {
      const refused = await fetch(`${gateway.url}/metrics`, { headers });
      expect(refused.status).toBe(401);
      const body = (await refused.json()) as { error: { type: string } };
      expect(body.error.type).toBe("auth_error");
      expect(refused.headers.get("x-request-id")).toMatch(/^req_/);
      expect(refused.headers.get("www-authenticate")).toContain("Bearer");
    }

    // 1. success (usage 10 in, 5 out: 10 x $1/M + 5 x $2/M = 20,000 nano-USD)
    mock.handler = (_req, res) => json(res, 200, chatCompletion("ok"));
    expect((await chat(raw, {})).status).toBe(200);
    // 2. a 4xx: an unknown model (refused before an upstream or a model is known)
    expect((await chat(raw, { model: "no-such-model" })).status).toBe(404);
    // 3. 429 on the first key, then 200 from the second (20,000 nano-USD)
    let calls = 0;
    mock.handler = (_req, res) => (++calls === 1 ? json(res, 429, { error: { message: "slow down" } }, { "retry-after": "30" }) : json(res, 200, chatCompletion("ok")));
    const failedOver = await chat(raw, {});
    expect(failedOver.status).toBe(200);
    expect(failedOver.headers.get("x-gateway-attempts")).toBe("2");
    // 4. a stream (usage 10 in, 2 out: 10,000 + 4,000 = 14,000 nano-USD)
    mock.handler = (req, res) => chatStream(req, res, ["Hel", "lo"]);
    const streamed = await chat(raw, { stream: true });
    expect(streamed.status).toBe(200);
    expect(await streamed.text()).toContain("[DONE]");

    let m = await scrape(gateway.url);
    const mp = { model: "gpt-mock", provider: "mockai" };
    const served = { route: ROUTE, ...mp };
    expect(valueOf(m, "gateway_requests_total", { ...served, status: "200" })).toBe(3);
    expect(valueOf(m, "gateway_requests_total", { route: ROUTE, model: "", status: "404" })).toBe(1);
    expect(valueOf(m, "gateway_requests_total", { route: "/metrics", status: "401" })).toBe(3);
    expect(histogramOf(m, "gateway_request_duration_seconds", { route: ROUTE }).count).toBe(4);
    expect(valueOf(m, "gateway_tokens_total", { ...mp, type: "input" })).toBe(30);
    expect(valueOf(m, "gateway_tokens_total", { ...mp, type: "output" })).toBe(12);
    expect(valueOf(m, "gateway_cost_nano_usd_total", mp)).toBe(54_000);
    const gen = { gen_ai_operation_name: "chat", gen_ai_provider_name: "openai", gen_ai_request_model: "gpt-mock" };
    expect(histogramOf(m, "gen_ai_client_token_usage", { ...gen, gen_ai_token_type: "input" })).toEqual({ count: 3, sum: 30 });
    expect(histogramOf(m, "gen_ai_client_token_usage", { ...gen, gen_ai_token_type: "output" })).toEqual({ count: 3, sum: 12 });
    expect(histogramOf(m, "gen_ai_server_time_to_first_token_seconds", gen).count).toBe(1);
    expect(valueOf(m, "gateway_upstream_attempts_total", { provider: "mockai", result: "success" })).toBe(3);
    expect(valueOf(m, "gateway_upstream_attempts_total", { provider: "mockai", result: "rate_limited" })).toBe(1);
    expect(valueOf(m, "gateway_upstream_rate_limited_total", { provider: "mockai" })).toBe(1);
    expect(valueOf(m, "gateway_upstream_key_cooldowns_total", { provider: "mockai" })).toBe(1);
    expect(valueOf(m, "gateway_upstream_failovers_total", { provider: "mockai" })).toBe(1);
    expect(valueOf(m, "gateway_upstream_keys_cooling_down")).toBe(1);
    expect(valueOf(m, "gateway_circuit_breakers", { state: "closed" })).toBe(2);
    expect(valueOf(m, "gateway_circuit_breakers", { state: "open" })).toBe(0);
    expect(valueOf(m, "gateway_holds_outstanding")).toBe(0);
    expect(valueOf(m, "gateway_settlement_retries_pending")).toBe(0);
    // 3 admissions + 3 settlements, in however many batches they were grouped.
    const batches = histogramOf(m, "gateway_db_batch_duration_seconds", { dialect: kind });
    expect(batches.count).toBeGreaterThanOrEqual(1);
    expect(batches.count).toBeLessThanOrEqual(6);
    // prom-client's default metrics: event-loop delay and process memory.
    expect(valueOf(m, "process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(valueOf(m, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
    expect(valueOf(m, "nodejs_eventloop_lag_p99_seconds")).toBeGreaterThanOrEqual(0);
    // Bounded labels: no account or key ids anywhere by default.
    const text = await (await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    expect(text).not.toContain(account.id);
    expect(text).not.toContain(KEYS[0]!);

    // 5. the client leaves mid-stream: counted as 499, its (estimated) usage still metered.
    mock.handler = (req, res) =>
      chatStream(
        req,
        res,
        Array.from({ length: 200 }, () => "word "),
        { delayMs: 20 },
      );
    const controller = new AbortController();
    const aborted = await chat(raw, { stream: true }, controller.signal);
    const reader = aborted.body!.getReader();
    for (let chunks = 0; chunks < 4; chunks++) await reader.read();
    controller.abort();
    await reader.read().catch(() => undefined);
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      m = await scrape(gateway.url);
      if (valueOf(m, "gateway_requests_total", { ...served, status: "499" }) === 1) break;
      await sleep(25);
    }
    expect(valueOf(m, "gateway_requests_total", { ...served, status: "499" })).toBe(1);
    // ... and, like every request, it has its one log line (Fastify runs no onResponse for it).
    expect(gateway.logs.filter((l) => l.msg === "request" && l.error === "client_aborted")).toHaveLength(1);
    expect(valueOf(m, "gateway_requests_total", { ...served, status: "200" })).toBe(3);
    expect(histogramOf(m, "gen_ai_server_time_to_first_token_seconds", gen).count).toBe(2);
    expect(valueOf(m, "gateway_upstream_attempts_total", { provider: "mockai", result: "success" })).toBe(4);

    // 6. the client leaves a buffered request before the upstream answered: 499 too, nothing metered.
    mock.handler = (_req, res) => void setTimeout(() => json(res, 200, chatCompletion("too late")), 10_000).unref();
    const early = new AbortController();
    const pending = chat(raw, {}, early.signal).catch(() => null);
    while (mock.requests.length < 6) await sleep(10);
    early.abort();
    await pending;
    while (Date.now() < deadline + 5000) {
      m = await scrape(gateway.url);
      if (valueOf(m, "gateway_requests_total", { ...served, status: "499" }) === 2) break;
      await sleep(25);
    }
    expect(valueOf(m, "gateway_requests_total", { ...served, status: "499" })).toBe(2);
    expect(gateway.logs.filter((l) => l.msg === "request" && l.error === "client_aborted")).toHaveLength(2);

    // Money and tokens: exactly the ledger's sums (integers, no float drift).
    const rows = await gateway.app.ctx.store.db
      .selectFrom("ledger")
      .select(["input_tokens", "output_tokens", "cost_nano"])
      .where("account_id", "=", account.id)
      .where("kind", "=", "usage")
      .execute();
    expect(rows).toHaveLength(4);
    const sum = (k: "input_tokens" | "output_tokens" | "cost_nano") => rows.reduce((t, r) => t + BigInt(r[k]), 0n);
    expect(BigInt(valueOf(m, "gateway_cost_nano_usd_total", mp))).toBe(sum("cost_nano"));
    expect(BigInt(valueOf(m, "gateway_tokens_total", { ...mp, type: "input" }))).toBe(sum("input_tokens"));
    expect(BigInt(valueOf(m, "gateway_tokens_total", { ...mp, type: "output" }))).toBe(sum("output_tokens"));
    expect(valueOf(m, "gateway_holds_outstanding")).toBe(0);
  });
});

describe("the metrics listener and the opt-ins", () => {
  it("serves /metrics on a separate address without a token, and not on the main listener", async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(`${mockConfig({ openaiUrl: mock.url })}\nmetrics:\n  listen: "127.0.0.1:0"\n`);
    const { raw } = await gateway.createAccount();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("ok"));
    expect((await chat(raw, {})).status).toBe(200);
    const url = gateway.app.metricsUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(url).not.toBe(gateway.url);
    const m = await scrape(url, null);
    expect(valueOf(m, "gateway_requests_total", { route: ROUTE, model: "gpt-mock", status: "200" })).toBe(1);
    expect((await fetch(`${gateway.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${url}/v1/models`)).status).toBe(404);
  });

  it("asks the separate listener for the token too when one is configured", async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(`${mockConfig({ openaiUrl: mock.url })}\nmetrics:\n  listen: "127.0.0.1:0"\n  token_env: GW_TEST_METRICS_TOKEN\n`, {
      env: { GW_TEST_METRICS_TOKEN: TOKEN },
    });
    const url = gateway.app.metricsUrl!;
    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    await scrape(url);
    await scrape(gateway.url);
  });

  it("keeps per-account series only when asked, capped at max_accounts", async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(`${mockConfig({ openaiUrl: mock.url })}\nmetrics:\n  token_env: GW_TEST_METRICS_TOKEN\n  account_series: { enabled: true, max_accounts: 1 }\n`, {
      env: { GW_TEST_METRICS_TOKEN: TOKEN },
    });
    mock.handler = (_req, res) => json(res, 200, chatCompletion("ok"));
    const first = await gateway.createAccount();
    const second = await gateway.createAccount();
    expect((await chat(first.raw, {})).status).toBe(200);
    expect((await chat(second.raw, {})).status).toBe(200);
    expect((await chat(second.raw, {})).status).toBe(200);
    const m = await scrape(gateway.url);
    expect(valueOf(m, "gateway_account_requests_total", { account: first.account.id, status: "200" })).toBe(1);
    expect(valueOf(m, "gateway_account_requests_total", { account: "_other", status: "200" })).toBe(2);
    expect(seriesOf(m, "gateway_account_requests_total").map((l) => l.account)).not.toContain(second.account.id);
    expect(valueOf(m, "gateway_account_cost_nano_usd_total", { account: first.account.id })).toBe(20_000);
  });

  it("refuses a metrics section it cannot serve, naming the field", async () => {
    await expect(startGateway(`providers: {}\nmetrics: {}\n`)).rejects.toThrow(/metrics: set token_env .* or listen/);
    await expect(startGateway(`providers: {}\nmetrics:\n  token_env: GW_TEST_UNSET_TOKEN\n`)).rejects.toThrow(
      /metrics.token_env: environment variable GW_TEST_UNSET_TOKEN is not set/,
    );
    await expect(startGateway(`providers: {}\nmetrics:\n  listen: "nowhere"\n`)).rejects.toThrow(/metrics.listen: "nowhere" is not host:port/);
  });
});

describe.each(["sqlite", "postgres"] as const)("a media request the client leaves (%s)", (kind) => {
  it("is a 499 in /metrics and in the one log line, before the upstream answers and while its answer is read", async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(`${mediaConfig({ openaiUrl: mock.url })}\nmetrics:\n  token_env: GW_TEST_METRICS_TOKEN\n`, { kind, env: { GW_TEST_METRICS_TOKEN: TOKEN } });
    const { raw, account } = await gateway.createAccount({ balance: "10" });
    const before = await gateway.app.ctx.store.accounts.get(account.id);
    const generate = (signal: AbortSignal) =>
      fetch(`${gateway!.url}/v1/images/generations`, {
        method: "POST",
        headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "image-mock", prompt: "a lighthouse" }),
        signal,
      }).catch(() => null);
    const labels = { route: "/v1/images/generations", model: "image-mock", provider: "mockai", status: "499" };
    const aborted = async (count: number) => {
      for (const deadline = Date.now() + 5000; Date.now() < deadline; await sleep(25)) {
        if (valueOf(await scrape(gateway!.url), "gateway_requests_total", labels) === count) break;
      }
      expect(valueOf(await scrape(gateway!.url), "gateway_requests_total", labels)).toBe(count);
      expect(gateway!.logs.filter((l) => l.msg === "request" && l.error === "client_aborted")).toHaveLength(count);
    };

    // 1. before the upstream answers
    mock.handler = (_req, res) => void setTimeout(() => json(res, 200, { created: 1, data: [{ b64_json: "AAAA" }] }), 10_000).unref();
    const early = new AbortController();
    const first = generate(early.signal);
    while (mock.requests.length < 1) await sleep(10);
    early.abort();
    await first;
    await aborted(1);

    // 2. while the gateway reads the upstream's answer (head sent, body unfinished)
    mock.handler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"created": 1, "data": [');
    };
    const late = new AbortController();
    const second = generate(late.signal);
    while (mock.requests.length < 2) await sleep(10);
    await sleep(50);
    late.abort();
    await second;
    await aborted(2);

    // Nothing charged or held for either.
    expect(await gateway.app.ctx.store.accounts.get(account.id)).toMatchObject({ balance: before!.balance, held: 0n });
    expect(valueOf(await scrape(gateway.url), "gateway_holds_outstanding")).toBe(0);
  });
});
