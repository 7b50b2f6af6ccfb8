// A client that closed its connection before the gateway read its request (it gave up while the
// connection waited in a queue, e.g. behind a busy worker) gets nothing forwarded and nothing charged.
import { connect } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { chatCompletion, chatStream, json, sleep, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { startGateway, type TestGateway } from "../support/gateway.js";

type Departure = "half-close" | "close";
type Call = "chat" | "chat stream" | "embeddings";

const CONFIG = (openaiUrl: string) => `
providers:
  mockai:
    type: openai
    base_url: "${openaiUrl}/v1"
    keys: ["sk-mock-openai-key-0001"]
models:
  - { id: gpt-mock, kind: chat, provider: mockai, upstream_model: upstream-gpt, pricing: { input_per_mtok: "1.00", output_per_mtok: "2.00" } }
  - { id: embed-mock, kind: embedding, provider: mockai, upstream_model: upstream-embed, pricing: { input_per_mtok: "0.13" } }
tiers:
  standard: { models: ["*"] }
server:
  default_tier: standard
`;

const PATHS: Record<Call, string> = { chat: "/v1/chat/completions", "chat stream": "/v1/chat/completions", embeddings: "/v1/embeddings" };

function rawRequest(host: string, apiKey: string, call: Call): string {
  const body = JSON.stringify(
    call === "embeddings" ? { model: "embed-mock", input: "Hi" } : { model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], stream: call === "chat stream" },
  );
  return (
    `POST ${PATHS[call]} HTTP/1.1\r\nhost: ${host}\r\nauthorization: Bearer ${apiKey}\r\n` +
    `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** Keeps this process (the gateway's too) from running anything else for `ms`, as a starved worker. */
function busyFor(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spinning on purpose
  }
}

/**
 * Connects, writes one complete request and leaves at once: a FIN after the request (half-close)
 * or the socket closed outright. With `queued`, the gateway's process is kept busy meanwhile, so
 * it finds the request and the departure together when it gets to the connection.
 */
async function sendAndLeave(url: string, request: string, departure: Departure, queued: boolean): Promise<void> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port) });
  socket.on("error", () => undefined);
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  socket.write(request);
  if (departure === "half-close") socket.end();
  else socket.destroy();
  if (queued) busyFor(200);
}

for (const kind of DATABASE_KINDS) {
  describe(`a client gone before its request was read, on ${kind}`, () => {
    let mock: MockUpstream;
    let gateway: TestGateway;

    beforeAll(async () => {
      mock = await startMockUpstream();
      gateway = await startGateway(CONFIG(mock.url), { kind });
    });
    afterAll(async () => {
      await gateway?.close();
      await mock?.close();
    });
    beforeEach(() => {
      mock.requests.length = 0;
      mock.handler = (req, res) => {
        if (req.url.endsWith("/embeddings"))
          return json(res, 200, {
            object: "list",
            data: [{ object: "embedding", index: 0, embedding: [0.5] }],
            model: "upstream-embed",
            usage: { prompt_tokens: 1, total_tokens: 1 },
          });
        return req.body?.stream ? chatStream(req, res, ["Hel", "lo"]) : json(res, 200, chatCompletion("Hello"));
      };
    });

    const cases: Array<[Call, Departure, boolean]> = [];
    for (const call of ["chat", "chat stream", "embeddings"] as const)
      for (const departure of ["half-close", "close"] as const) for (const queued of [false, true]) cases.push([call, departure, queued]);

    it.each(cases)("%s, %s after the request (queued: %s): not forwarded, not charged", async (call, departure, queued) => {
      const { raw, key, account } = await gateway.createAccount({ balance: "5" });
      const before = gateway.logs.length;
      await sendAndLeave(gateway.url, rawRequest(new URL(gateway.url).host, raw, call), departure, queued);
      // Recorded once the gateway is done with it: a 499 (client_aborted) naming its key.
      const deadline = Date.now() + 5000;
      while (!gateway.logs.slice(before).some((line) => line.path === PATHS[call]) && Date.now() < deadline) await sleep(20);
      // Time for a forward (the mock answers at once) and a settlement, were there any.
      await sleep(200);
      const lines = gateway.logs.slice(before).filter((l) => l.path === PATHS[call]);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ status: 499, error: "client_aborted", key: key.id });
      expect(mock.requests).toHaveLength(0);
      const db = gateway.app.ctx.store.db;
      expect(await db.selectFrom("ledger").select("id").where("key_id", "=", key.id).execute()).toHaveLength(0);
      expect(await db.selectFrom("holds").select("id").where("key_id", "=", key.id).execute()).toHaveLength(0);
      const row = await db.selectFrom("accounts").select(["balance_nano", "held_nano"]).where("id", "=", account.id).executeTakeFirstOrThrow();
      expect(row.held_nano).toBe(0n);
      expect(row.balance_nano).toBe(5_000_000_000n);
    });
  });
}

// Gone later: after its body was read, while a webhook guardrail checked it (before admission).
const CHECKED_CONFIG = (openaiUrl: string, moderatorUrl: string) => `${CONFIG(openaiUrl)}
guardrails:
  - name: moderator
    kind: webhook
    webhook: { url: "${moderatorUrl}/check", timeout_ms: 5000 }
    applies_to: [request]
    mode: block
    on_failure: closed
`;

for (const kind of DATABASE_KINDS) {
  describe(`a client gone while its request was checked, on ${kind}`, () => {
    let mock: MockUpstream;
    let moderator: MockUpstream;
    let gateway: TestGateway;

    beforeAll(async () => {
      mock = await startMockUpstream();
      moderator = await startMockUpstream();
      gateway = await startGateway(CHECKED_CONFIG(mock.url, moderator.url), { kind });
    });
    afterAll(async () => {
      await gateway?.close();
      await moderator?.close();
      await mock?.close();
    });

    it.each(["chat", "chat stream"] as const)("%s: not forwarded, not charged, recorded as a 499", async (call) => {
      mock.requests.length = 0;
      mock.handler = (req, res) => (req.body?.stream ? chatStream(req, res, ["Hel", "lo"]) : json(res, 200, chatCompletion("Hello")));
      let pass: () => void = () => undefined;
      const passed = new Promise<void>((resolve) => (pass = resolve));
      moderator.handler = async (_req, res) => {
        await passed;
        json(res, 200, { verdict: "pass" });
      };
      const { raw, key, account } = await gateway.createAccount({ balance: "5" });
      const before = gateway.logs.length;
      const { hostname, port } = new URL(gateway.url);
      const socket = connect({ host: hostname, port: Number(port) });
      socket.on("error", () => undefined);
      socket.write(rawRequest(new URL(gateway.url).host, raw, call));
      const deadline = Date.now() + 5000;
      const waited = moderator.requests.length;
      while (moderator.requests.length === waited && Date.now() < deadline) await sleep(10);
      socket.destroy();
      // The gateway sees the close before the webhook answers.
      await sleep(100);
      pass();
      while (!gateway.logs.slice(before).some((line) => line.path === PATHS[call]) && Date.now() < deadline) await sleep(20);
      await sleep(200);
      const lines = gateway.logs.slice(before).filter((l) => l.path === PATHS[call]);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ status: 499, error: "client_aborted", key: key.id });
      expect(mock.requests).toHaveLength(0);
      const db = gateway.app.ctx.store.db;
      expect(await db.selectFrom("ledger").select("id").where("key_id", "=", key.id).execute()).toHaveLength(0);
      const row = await db.selectFrom("accounts").select(["balance_nano", "held_nano"]).where("id", "=", account.id).executeTakeFirstOrThrow();
      expect(row.held_nano).toBe(0n);
      expect(row.balance_nano).toBe(5_000_000_000n);
    });
  });
}
