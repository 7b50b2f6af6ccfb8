// Routing groups: a model served by several deployments (src/pipeline/routing.ts). Fallover on 429,
// no response and 5xx, weights, priorities, deployment breakers, streams before and after their first
// byte, context-length fallback; the ledger row and headers name the serving deployment and charge
// its price; failed attempts cost nothing. The first case also runs on PostgreSQL.
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, chatStream, json, sleep, startMockUpstream, type MockHandler, type MockUpstream } from "../support/mock-upstream.js";

interface Setup {
  gateway: TestGateway;
  mocks: MockUpstream[];
  client: OpenAI;
  accountId: string;
}

/** Providers p0..pN-1, one mock upstream and one key each; `models` is YAML for the models section. */
async function setup(count: number, models: string, options: { kind?: "sqlite" | "postgres"; extra?: string; keysPerProvider?: number[] } = {}): Promise<Setup> {
  const mocks: MockUpstream[] = [];
  for (let i = 0; i < count; i++) mocks.push(await startMockUpstream());
  const keys = (i: number) => JSON.stringify(Array.from({ length: options.keysPerProvider?.[i] ?? 1 }, (_, k) => `sk-mock-routing-key-${i}${k}00000`));
  const providers = mocks.map((m, i) => `  p${i}: { type: openai, base_url: "${m.url}/v1", keys: ${keys(i)}, apis: [chat] }`).join("\n");
  const gateway = await startGateway(`providers:\n${providers}\nmodels:\n${models}\n${options.extra ?? ""}`, { kind: options.kind ?? "sqlite" });
  const created = await gateway.createAccount({ balance: "10" });
  const client = new OpenAI({ apiKey: created.raw, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  return { gateway, mocks, client, accountId: created.account.id };
}

const ok: MockHandler = (_req, res) => json(res, 200, chatCompletion("ok"));
const rateLimited: MockHandler = (_req, res) => json(res, 429, { error: { message: "slow down" } });
const reset: MockHandler = (_req, res) => {
  res.socket!.destroy();
};
const failing: MockHandler = (_req, res) => json(res, 500, { error: { message: "boom" } });

const THREE = `
  - id: routed
    kind: chat
    context_window: 128000
    pricing: { input_per_mtok: "1.00", output_per_mtok: "2.00" }
    deployments:
      - { name: limited, provider: p0, upstream_model: up-limited }
      - { name: resetting, provider: p1, upstream_model: up-resetting }
      - { name: healthy, provider: p2, upstream_model: up-healthy, pricing: { input_per_mtok: "4.00", output_per_mtok: "8.00" } }
`;

describe("routing groups", () => {
  let s: Setup | undefined;
  afterEach(async () => {
    await s?.gateway.close();
    for (const mock of s?.mocks ?? []) await mock.close();
    s = undefined;
  });

  const ask = (model = "routed") => s!.client.chat.completions.create({ model, messages: [{ role: "user", content: "Hi" }] }).withResponse();
  const ledgerRows = () => s!.gateway.app.ctx.store.db.selectFrom("ledger").selectAll().where("account_id", "=", s!.accountId).where("kind", "=", "usage").execute();
  const upstreamRequests = () => s!.mocks.reduce((sum, m) => sum + m.requests.length, 0);

  for (const kind of ["sqlite", "postgres"] as const) {
    it(`429, reset and healthy deployments: every request served by the healthy one at its price (${kind})`, async () => {
      s = await setup(3, THREE, { kind });
      [s.mocks[0]!.handler, s.mocks[1]!.handler, s.mocks[2]!.handler] = [rateLimited, reset, ok];
      const before = (await s.gateway.app.ctx.store.accounts.get(s.accountId))!;
      for (let i = 0; i < 5; i++) {
        const sent = upstreamRequests();
        const { data, response } = await ask();
        expect(data.choices[0]!.message.content).toBe("ok");
        expect(response.headers.get("x-gateway-deployment")).toBe("healthy");
        // Every attempt upstream is counted, across deployments and keys (the 429 key cools down after the first).
        expect(Number(response.headers.get("x-gateway-attempts"))).toBe(upstreamRequests() - sent);
        if (i === 0) expect(response.headers.get("x-gateway-attempts")).toBe("3");
        expect(response.headers.get("x-gateway-cost-usd")).toBe("0.00008");
      }
      expect(s.mocks[2]!.requests.map((r) => r.body.model)).toEqual(Array(5).fill("up-healthy"));
      // By hand: 10 prompt tokens at $4.00/Mtok + 5 completion tokens at $8.00/Mtok = 40,000 + 40,000 nano-USD.
      const rows = await ledgerRows();
      expect(rows).toHaveLength(5);
      for (const row of rows) {
        expect(BigInt(row.cost_nano)).toBe(80_000n);
        expect(row.deployment).toBe("healthy");
        expect(row.provider).toBe("p2");
        expect(row.model).toBe("routed");
      }
      // The failed attempts cost nothing: the balance fell by exactly the five charges, and nothing is held.
      const after = (await s.gateway.app.ctx.store.accounts.get(s.accountId))!;
      expect(before.balance - after.balance).toBe(5n * 80_000n);
      expect(after.held).toBe(0n);
    });
  }

  it("every deployment failing: the client gets the failure, nothing is charged or held", async () => {
    s = await setup(3, THREE);
    [s.mocks[0]!.handler, s.mocks[1]!.handler, s.mocks[2]!.handler] = [failing, reset, failing];
    const error = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error.headers?.get("x-gateway-attempts")).toBe("3");
    expect(error.headers?.get("x-gateway-deployment")).toBeNull();
    expect(await ledgerRows()).toHaveLength(0);
    expect((await s.gateway.app.ctx.store.accounts.get(s.accountId))!.held).toBe(0n);
  });

  it("weighted: 1,000 requests split by weight within 4 standard deviations", async () => {
    s = await setup(
      2,
      `
  - id: routed
    kind: chat
    routing: { strategy: weighted }
    deployments:
      - { name: light, provider: p0, weight: 1 }
      - { name: heavy, provider: p1, weight: 3 }
`,
    );
    s.mocks[0]!.handler = ok;
    s.mocks[1]!.handler = ok;
    const served: Record<string, number> = { light: 0, heavy: 0 };
    const total = 1000;
    let next = 0;
    const worker = async () => {
      while (next < total) {
        next += 1;
        const { response } = await ask();
        served[response.headers.get("x-gateway-deployment")!]! += 1;
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    expect(served.light! + served.heavy!).toBe(total);
    // Binomial(n = 1000, p = 1/4): mean 250, standard deviation sqrt(1000 * 0.25 * 0.75) ≈ 13.7.
    const sd = Math.sqrt(total * 0.25 * 0.75);
    expect(Math.abs(served.light! - 250)).toBeLessThanOrEqual(4 * sd);
    expect(s.mocks[0]!.requests.length).toBe(served.light);
  });

  it("ordered: the lowest priority number first, config order within a priority, the next priority only on failure", async () => {
    s = await setup(
      3,
      `
  - id: routed
    kind: chat
    deployments:
      - { name: spare, provider: p0, priority: 2 }
      - { name: first, provider: p1, priority: 1 }
      - { name: second, provider: p2, priority: 1 }
`,
    );
    s.mocks.forEach((m) => (m.handler = ok));
    for (let i = 0; i < 3; i++) expect((await ask()).response.headers.get("x-gateway-deployment")).toBe("first");
    s.mocks[1]!.handler = failing;
    expect((await ask()).response.headers.get("x-gateway-deployment")).toBe("second");
    s.mocks[2]!.handler = failing;
    const { response } = await ask();
    expect(response.headers.get("x-gateway-deployment")).toBe("spare");
    expect(response.headers.get("x-gateway-attempts")).toBe("3");
    expect(s.mocks[0]!.requests).toHaveLength(1);
  });

  it("a deployment's breaker opens, half-opens after open_ms, and closes on a successful trial", async () => {
    s = await setup(
      2,
      `
  - id: routed
    kind: chat
    deployments:
      - { name: flaky, provider: p0 }
      - { name: backup, provider: p1, priority: 1 }
`,
      // Two keys per provider: each key sees one of the two failures (under min_requests), so only
      // the deployment's breaker opens and the skipping below is the deployment breaker's doing.
      { extra: "upstream_health: { window_ms: 30000, min_requests: 2, failure_threshold: 0.5, open_ms: 400, half_open_trials: 1 }", keysPerProvider: [2, 2] },
    );
    s.mocks[0]!.handler = failing;
    s.mocks[1]!.handler = ok;
    const health = s.gateway.app.ctx.pipeline.health;
    const scope = "deployment:routed/flaky";
    for (let i = 0; i < 2; i++) expect((await ask()).response.headers.get("x-gateway-attempts")).toBe("2");
    expect(health.isOpen(scope)).toBe(true);
    expect(new Set(s.mocks[0]!.requests.map((r) => r.key)).size).toBe(2);
    // Open: skipped without a request to it.
    const { response } = await ask();
    expect(response.headers.get("x-gateway-deployment")).toBe("backup");
    expect(response.headers.get("x-gateway-attempts")).toBe("1");
    expect(s.mocks[0]!.requests).toHaveLength(2);
    // Half-open after open_ms: one trial; it succeeds, so the breaker closes and flaky serves again.
    await sleep(450);
    expect(health.isOpen(scope)).toBe(false);
    s.mocks[0]!.handler = ok;
    expect((await ask()).response.headers.get("x-gateway-deployment")).toBe("flaky");
    expect((await ask()).response.headers.get("x-gateway-deployment")).toBe("flaky");
    const transitions = s.gateway.logs.filter((l) => l.scope === scope).map((l) => l.state);
    expect(transitions).toEqual(["open", "closed"]);
  });

  it("a deployment without a key for the account is passed over without counting against its breaker", async () => {
    s = await setup(
      2,
      `
  - id: routed
    kind: chat
    deployments:
      - { name: keyless, provider: p0 }
      - { name: keyed, provider: p1 }
`,
      { extra: "upstream_health: { min_requests: 2, failure_threshold: 0.5 }", keysPerProvider: [0, 1] },
    );
    s.mocks[1]!.handler = ok;
    for (let i = 0; i < 4; i++) {
      const { response } = await ask();
      expect(response.headers.get("x-gateway-deployment")).toBe("keyed");
      expect(response.headers.get("x-gateway-attempts")).toBe("1");
    }
    // Nothing was sent to keyless: its health is unknown, not bad (another account may have keys for it).
    expect(s.gateway.app.ctx.pipeline.health.isOpen("deployment:routed/keyless")).toBe(false);
  });

  it("a stream that fails before its first byte falls over; one that fails after it does not", async () => {
    s = await setup(
      2,
      `
  - id: routed
    kind: chat
    deployments:
      - { name: first, provider: p0 }
      - { name: second, provider: p1 }
`,
    );
    s.mocks[0]!.handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.flushHeaders();
      setTimeout(() => res.socket!.destroy(), 20);
    };
    s.mocks[1]!.handler = (req, res) => chatStream(req, res, ["Hel", "lo"]);
    const streamed = await s.client.chat.completions.create({ model: "routed", messages: [{ role: "user", content: "x" }], stream: true }).withResponse();
    expect(streamed.response.headers.get("x-gateway-deployment")).toBe("second");
    expect(streamed.response.headers.get("x-gateway-attempts")).toBe("2");
    let text = "";
    for await (const chunk of streamed.data) text += chunk.choices[0]?.delta?.content ?? "";
    expect(text).toBe("Hello");

    // After the first byte: no fallover; the client sees what arrived and then the stream's failure.
    s.mocks[0]!.handler = (req, res) => chatStream(req, res, ["one", "two", "three"], { stopAfter: 1, delayMs: 10 });
    const secondBefore = s.mocks[1]!.requests.length;
    const broken = await s.client.chat.completions.create({ model: "routed", messages: [{ role: "user", content: "x" }], stream: true }).withResponse();
    expect(broken.response.headers.get("x-gateway-deployment")).toBe("first");
    let partial = "";
    const failure = await (async () => {
      for await (const chunk of broken.data) partial += chunk.choices[0]?.delta?.content ?? "";
    })().catch((e: unknown) => e);
    expect(partial).toBe("one");
    expect(failure).toBeInstanceOf(Error);
    expect(s.mocks[1]!.requests.length).toBe(secondBefore);
  });

  it("context-length errors fall over to a larger window when the model enables it, and are returned otherwise", async () => {
    const group = (id: string, fallback: boolean) => `
  - id: ${id}
    kind: chat
    routing: { context_fallback: ${fallback} }
    context_window: 8000
    deployments:
      - { name: small, provider: p0 }
      - { name: same, provider: p1 }
      - { name: large, provider: p2, context_window: 200000 }
`;
    s = await setup(3, group("routed", true) + group("strict", false));
    s.mocks[0]!.handler = (_req, res) =>
      json(res, 400, { error: { message: "This model's maximum context length is 8000 tokens.", type: "invalid_request_error", code: "context_length_exceeded" } });
    s.mocks[1]!.handler = ok;
    s.mocks[2]!.handler = ok;
    const { response } = await ask("routed");
    expect(response.headers.get("x-gateway-deployment")).toBe("large");
    expect(response.headers.get("x-gateway-attempts")).toBe("2");
    expect(s.mocks[1]!.requests).toHaveLength(0); // "same" has no larger window
    const error = (await ask("strict").catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.message).toContain("maximum context length");
    expect(s.mocks[2]!.requests).toHaveLength(1);
    expect(await ledgerRows()).toHaveLength(1);
  });

  it("the hold covers the dearest deployment; settlement charges the one that served", async () => {
    s = await setup(
      2,
      `
  - id: routed
    kind: chat
    default_output_tokens: 1000
    deployments:
      - { name: cheap, provider: p0, pricing: { input_per_mtok: "1.00", output_per_mtok: "2.00" } }
      - { name: dear, provider: p1, priority: 1, pricing: { input_per_mtok: "10.00", output_per_mtok: "30.00" } }
`,
    );
    let heldWhileServing = -1n;
    s.mocks[0]!.handler = async (_req, res) => {
      heldWhileServing = (await s!.gateway.app.ctx.store.accounts.get(s!.accountId))!.held;
      json(res, 200, chatCompletion("ok"));
    };
    const { response } = await ask();
    expect(response.headers.get("x-gateway-deployment")).toBe("cheap");
    // Held: 1,000 projected output tokens at the dear deployment's $30/Mtok = 30,000,000 nano-USD, plus the prompt.
    expect(heldWhileServing).toBeGreaterThanOrEqual(30_000_000n);
    // Charged: 10 x $1/Mtok + 5 x $2/Mtok = 20,000 nano-USD.
    const [row] = await ledgerRows();
    expect(BigInt(row!.cost_nano)).toBe(20_000n);
    expect(row!.deployment).toBe("cheap");
  });

  it("a model in the single-provider form is unchanged: no deployment header, no deployment in the ledger", async () => {
    s = await setup(1, `  - { id: plain, kind: chat, provider: p0, pricing: { input_per_mtok: "1", output_per_mtok: "2" } }`);
    s.mocks[0]!.handler = ok;
    const { response } = await ask("plain");
    expect(response.headers.get("x-gateway-deployment")).toBeNull();
    const [row] = await ledgerRows();
    expect(row!.deployment).toBeNull();
    expect(row!.provider).toBe("p0");
  });
});
