// POST /v1/embeddings on a gemini upstream, with the official SDK against the mock Gemini API
// (test/support/gemini-upstream.ts), which checks the key header, the batchEmbedContents path and
// body: the answer turned into OpenAI's list (float, and base64 encoded by the gateway), batches,
// billing of the gateway's estimate (Gemini reports no usage for embeddings) or of usageMetadata
// when present, refusals of inputs Gemini cannot take, failover on 429, and scrubbing.
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { geminiEmbeddings, geminiError, startGeminiMock, type GeminiMock } from "../support/gemini-upstream.js";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { client, ledgerRows, NANO_PER_USD } from "./support.js";

const KEYS = ["AIzaSyMOCK-embed-key-first-00001", "AIzaSyMOCK-embed-key-second-0002"];

function config(url: string): string {
  return `
providers:
  google-native:
    type: gemini
    base_url: "${url}"
    keys: ${JSON.stringify(KEYS)}
models:
  - id: gemini-embed
    kind: embedding
    provider: google-native
    upstream_model: gemini-embedding-001
    pricing: { input_per_mtok: "0.15" }
tiers:
  standard: { models: ["*"] }
server:
  default_tier: standard
`;
}

/** A vector of `n` floats that float32 represents exactly (so float32 round trips compare equal). */
function vector(n: number, seed: number): number[] {
  return Array.from({ length: n }, (_, i) => ((i * 3 + seed * 17) % 64) / 32 - 1);
}

const float32Base64 = (values: number[]) => Buffer.from(new Float32Array(values).buffer).toString("base64");
const PRICE_PER_TOKEN_NANO = 150n; // 0.15 USD per million tokens

describe("embeddings on gemini", () => {
  let mock: GeminiMock;
  let gateway: TestGateway;
  let openai: OpenAI;
  let accountId: string;
  let raw: string;

  beforeAll(async () => {
    mock = await startGeminiMock(KEYS);
    gateway = await startGateway(config(mock.url));
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });
  beforeEach(async () => {
    mock.requests.length = 0;
    const created = await gateway.createAccount({ balance: "10" });
    accountId = created.account.id;
    raw = created.raw;
    openai = client(gateway, raw);
  });

  const post = (body: object) =>
    fetch(`${gateway.url}/v1/embeddings`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  it("embeds one text as floats via batchEmbedContents and bills the estimate, marked estimated", async () => {
    const v = vector(8, 1);
    mock.answer = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(geminiEmbeddings([v])));
    };
    const { data, response } = await openai.embeddings.create({ model: "gemini-embed", input: "a red kite", encoding_format: "float", dimensions: 8, user: "u-1" }).withResponse();
    expect(mock.requests[0]).toMatchObject({ path: "/v1beta/models/gemini-embedding-001:batchEmbedContents", key: KEYS[0] });
    expect(mock.requests[0]!.body).toEqual({ requests: [{ model: "models/gemini-embedding-001", content: { parts: [{ text: "a red kite" }] }, outputDimensionality: 8 }] });
    // "a red kite": 10 Latin characters at 4 per token, rounded up: 3 tokens, 3 x 150 nano-USD.
    expect(data).toEqual({
      object: "list",
      data: [{ object: "embedding", index: 0, embedding: v }],
      model: "gemini-embed",
      usage: { prompt_tokens: 3, total_tokens: 3, cost: "0.00000045" },
    });
    expect(response.headers.get("x-gateway-cost-usd")).toBe("0.00000045");
    const rows = await ledgerRows(gateway, accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ route: "embeddings", model: "gemini-embed", input_tokens: 3n, output_tokens: 0n, estimated: 1n, cost_nano: 3n * PRICE_PER_TOKEN_NANO });
    const account = (await gateway.app.ctx.store.accounts.get(accountId))!;
    expect(account.balance).toBe(10n * NANO_PER_USD - 450n);
    expect(account.held).toBe(0n);
  });

  it("a batch in base64 (the SDK's default): Gemini's floats encoded by the gateway as OpenAI does", async () => {
    const vectors = [vector(768, 1), vector(768, 2), vector(5, 3)];
    mock.answer = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(geminiEmbeddings(vectors)));
    };
    const result = await openai.embeddings.create({ model: "gemini-embed", input: ["one", "two", "three"] });
    expect(result.data.map((d) => Array.from(d.embedding))).toEqual(vectors);
    expect((mock.requests[0]!.body.requests as Array<{ content: unknown }>).map((r) => r.content)).toEqual(["one", "two", "three"].map((text) => ({ parts: [{ text }] })));

    const response = await post({ model: "gemini-embed", input: ["one", "two", "three"], encoding_format: "base64" });
    expect(((await response.json()) as { data: Array<{ embedding: string }> }).data.map((d) => d.embedding)).toEqual(vectors.map(float32Base64));
    // one, two, three: 1 + 1 + 2 estimated tokens.
    expect((await ledgerRows(gateway, accountId)).map((r) => [r.input_tokens, r.estimated, r.cost_nano])).toEqual([
      [4n, 1n, 600n],
      [4n, 1n, 600n],
    ]);
  });

  it("bills usageMetadata.promptTokenCount exactly when an answer carries it", async () => {
    mock.answer = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(geminiEmbeddings([vector(4, 1)], { usageMetadata: { promptTokenCount: 1234, totalTokenCount: 1234 } })));
    };
    const result = await openai.embeddings.create({ model: "gemini-embed", input: "x", encoding_format: "float" });
    expect(result.usage).toEqual({ prompt_tokens: 1234, total_tokens: 1234, cost: "0.0001851" });
    // By hand: 1,234 x 0.15 USD per million = 185.1 micro-USD.
    expect(await ledgerRows(gateway, accountId)).toMatchObject([{ input_tokens: 1234n, estimated: 0n, cost_nano: 185_100n }]);
  });

  it("refuses token-id inputs and more than 100 inputs with 400 naming input, calling nothing and charging nothing", async () => {
    for (const input of [[1, 2, 3], [[1, 2], [3]], Array.from({ length: 101 }, () => "x")]) {
      const error = (await openai.embeddings.create({ model: "gemini-embed", input }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
      expect(error.status).toBe(400);
      expect(error.error).toMatchObject({ type: "invalid_request", param: "input" });
    }
    expect(mock.requests).toHaveLength(0);
    expect(await ledgerRows(gateway, accountId)).toHaveLength(0);
    const account = (await gateway.app.ctx.store.accounts.get(accountId))!;
    expect([account.balance, account.held]).toEqual([10n * NANO_PER_USD, 0n]);
  });

  it("fails over on 429 to the second key and charges once", async () => {
    mock.answer = (req, res) => {
      if (mock.requests.length === 1) return geminiError(res, 429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).");
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(geminiEmbeddings((req.body.requests as unknown[]).map((_, i) => vector(4, i)))));
    };
    const { data, response } = await openai.embeddings.create({ model: "gemini-embed", input: ["a", "b"], encoding_format: "float" }).withResponse();
    expect(data.data).toHaveLength(2);
    expect(response.headers.get("x-gateway-attempts")).toBe("2");
    expect(new Set(mock.requests.map((r) => r.key))).toEqual(new Set(KEYS));
    expect(await ledgerRows(gateway, accountId)).toHaveLength(1);
  });

  it("an answer with fewer vectors than inputs is a 502 that charges nothing", async () => {
    mock.answer = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(geminiEmbeddings([vector(4, 1)])));
    };
    const response = await post({ model: "gemini-embed", input: ["a", "b"] });
    expect(response.status).toBe(502);
    expect(await ledgerRows(gateway, accountId)).toHaveLength(0);
    expect((await gateway.app.ctx.store.accounts.get(accountId))!.held).toBe(0n);
  });

  it("scrubs the key and host from upstream errors; an error charges nothing", async () => {
    mock.answer = (req, res) => geminiError(res, 400, "INVALID_ARGUMENT", `Bad request with key ${req.key} at ${mock.url}`);
    const response = await post({ model: "gemini-embed", input: "x" });
    const text = await response.text();
    expect(response.status).toBe(400);
    for (const canary of [...KEYS, mock.host]) expect(text).not.toContain(canary);
    expect(await ledgerRows(gateway, accountId)).toHaveLength(0);
    expect((await gateway.app.ctx.store.accounts.get(accountId))!.held).toBe(0n);
  });
});
