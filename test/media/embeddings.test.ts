// POST /v1/embeddings end to end with the official SDK against a mock OpenAI upstream: float and
// base64, single and batch input, per-input-token billing (reported or estimated), failover,
// refusals that charge nothing, tiers, the model listings, and scrubbing; one case on PostgreSQL.
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { upstreams } from "../../src/upstreams/registry.js";
import { isPostgresReachable } from "../support/databases.js";
import { json, startMockUpstream, type MockUpstream, type RecordedRequest } from "../support/mock-upstream.js";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { client, ledgerRows, NANO_PER_USD, OPENAI_KEYS } from "./support.js";

const OWN_KEY = "CANARYownKEY0123456789abcdefXYZ";

function embeddingConfig(openaiUrl: string): string {
  return `
providers:
  mockai:
    type: openai
    base_url: "${openaiUrl}/v1"
    keys: ${JSON.stringify(OPENAI_KEYS)}
models:
  - id: gpt-mock
    kind: chat
    provider: mockai
    pricing: { input_per_mtok: "1.00", output_per_mtok: "2.00" }
  - id: embed-mock
    kind: embedding
    provider: mockai
    upstream_model: upstream-embed
    pricing: { input_per_mtok: "0.13" }
tiers:
  standard: { models: ["*"] }
  basic: { models: [gpt-mock] }
server:
  default_tier: standard
`;
}

/** A vector of `n` floats that float32 represents exactly (so float32 round trips compare equal). */
function vector(n: number, seed: number): number[] {
  return Array.from({ length: n }, (_, i) => ((i * 7 + seed * 13) % 64) / 32 - 1);
}

function float32Base64(values: number[]): string {
  return Buffer.from(new Float32Array(values).buffer).toString("base64");
}

/** OpenAI's embeddings answer for the recorded request, in the encoding it asked for. */
function answer(req: RecordedRequest, vectors: number[][], usage: object | null = { prompt_tokens: 1234, total_tokens: 1234 }) {
  const base64 = req.body.encoding_format === "base64";
  return {
    object: "list",
    data: vectors.map((v, index) => ({ object: "embedding", index, embedding: base64 ? float32Base64(v) : v })),
    model: "upstream-embed",
    ...(usage && { usage }),
  };
}

// 1234 prompt tokens x 0.13 USD per million = 0.00016042 USD.
const COST_1234 = (1234n * 13n * NANO_PER_USD) / 100n / 1_000_000n;

describe("embeddings", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let openai: OpenAI;
  let accountId: string;
  let raw: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(embeddingConfig(mock.url));
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

  const account = async () => (await gateway.app.ctx.store.accounts.get(accountId))!;

  it("embeds one string as floats and charges the reported prompt tokens at the input price", async () => {
    const v = vector(8, 1);
    mock.handler = (req, res) => json(res, 200, answer(req, [v]));
    const { data: result, response } = await openai.embeddings
      .create({ model: "embed-mock", input: "a red kite", encoding_format: "float", dimensions: 8, user: "u-1" })
      .withResponse();
    expect(result.data).toEqual([{ object: "embedding", index: 0, embedding: v }]);
    expect(result.model).toBe("embed-mock");
    expect(mock.requests[0]!.url).toBe("/v1/embeddings");
    expect(mock.requests[0]!.body).toEqual({ model: "upstream-embed", input: "a red kite", encoding_format: "float", dimensions: 8, user: "u-1" });
    expect(COST_1234).toBe(160_420n);
    expect(response.headers.get("x-gateway-cost-usd")).toBe("0.00016042");

    const rows = await ledgerRows(gateway, accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ route: "embeddings", model: "embed-mock", input_tokens: 1234n, output_tokens: 0n, estimated: 0n, cost_nano: COST_1234 });
    const after = await account();
    expect(after.balance).toBe(10n * NANO_PER_USD - COST_1234);
    expect(after.held).toBe(0n);
  });

  it("passes a batch's base64 vectors through byte for byte (the SDK's default encoding)", async () => {
    const vectors = [vector(512, 1), vector(512, 2), vector(3, 3)];
    mock.handler = (req, res) => json(res, 200, answer(req, vectors));
    // Without encoding_format the SDK asks for base64 and decodes it itself.
    const result = await openai.embeddings.create({ model: "embed-mock", input: ["one", "two", "three"] });
    expect(mock.requests[0]!.body).toMatchObject({ input: ["one", "two", "three"], encoding_format: "base64" });
    expect(result.data.map((d) => Array.from(d.embedding))).toEqual(vectors);

    const response = await fetch(`${gateway.url}/v1/embeddings`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "embed-mock", input: ["one", "two", "three"], encoding_format: "base64" }),
    });
    const body = (await response.json()) as { data: Array<{ embedding: string }> };
    expect(body.data.map((d) => d.embedding)).toEqual(vectors.map(float32Base64));
    expect((await ledgerRows(gateway, accountId)).map((r) => r.cost_nano)).toEqual([COST_1234, COST_1234]);
  });

  it("without reported usage, bills the estimate marked estimated: token ids counted, text estimated", async () => {
    mock.handler = (req, res) => json(res, 200, answer(req, [vector(4, 1), vector(4, 2)], null));
    await openai.embeddings.create({
      model: "embed-mock",
      input: [
        [1, 2, 3],
        [4, 5],
      ],
      encoding_format: "float",
    });
    // "hello world": 11 Latin characters at 4 per token, rounded up: 3 tokens.
    await openai.embeddings.create({ model: "embed-mock", input: "hello world", encoding_format: "float" });
    // An impossible count is no measurement: the estimate again.
    mock.handler = (req, res) => json(res, 200, answer(req, [vector(4, 1)], { prompt_tokens: 1e30, total_tokens: 1e30 }));
    await openai.embeddings.create({ model: "embed-mock", input: "hello world", encoding_format: "float" });
    const rows = await ledgerRows(gateway, accountId);
    expect(rows.map((r) => [r.input_tokens, r.estimated, r.cost_nano])).toEqual([
      [5n, 1n, 650n], // 5 tokens x 130 nano-USD (0.13 USD per million)
      [3n, 1n, 390n],
      [3n, 1n, 390n],
    ]);
  });

  it("fails over on 429 to the second key and charges once", async () => {
    mock.handler = (req, res) => (mock.requests.length === 1 ? json(res, 429, { error: { message: "slow down" } }) : json(res, 200, answer(req, [vector(4, 1)])));
    const { response } = await openai.embeddings.create({ model: "embed-mock", input: "x", encoding_format: "float" }).withResponse();
    expect(response.headers.get("x-gateway-attempts")).toBe("2");
    expect(mock.requests.map((r) => r.key)).toEqual(expect.arrayContaining(OPENAI_KEYS));
    expect(new Set(mock.requests.map((r) => r.key)).size).toBe(2);
    expect(await ledgerRows(gateway, accountId)).toHaveLength(1);
  });

  it("refuses an invalid field with 400 naming it, without calling upstream or charging", async () => {
    const long = "a".repeat(131_073);
    for (const [body, param] of [
      [{ input: "x" }, "model"],
      [{ model: "embed-mock" }, "input"],
      [{ model: "embed-mock", input: "" }, "input"],
      [{ model: "embed-mock", input: [] }, "input"],
      [{ model: "embed-mock", input: long }, "input"],
      [{ model: "embed-mock", input: ["ok", long] }, "input[1]"],
      [{ model: "embed-mock", input: ["ok", 3] }, "input[1]"],
      [{ model: "embed-mock", input: Array.from({ length: 2049 }, () => "x") }, "input"],
      [{ model: "embed-mock", input: [1, -2] }, "input"],
      [{ model: "embed-mock", input: [1, 2.5] }, "input"],
      [{ model: "embed-mock", input: [[1], []] }, "input[1]"],
      [{ model: "embed-mock", input: [{ text: "x" }] }, "input[0]"],
      [{ model: "embed-mock", input: "x", dimensions: 0 }, "dimensions"],
      [{ model: "embed-mock", input: "x", dimensions: 1.5 }, "dimensions"],
      [{ model: "embed-mock", input: "x", dimensions: 16_385 }, "dimensions"],
      [{ model: "embed-mock", input: "x", encoding_format: "int8" }, "encoding_format"],
      [{ model: "embed-mock", input: "x", user: 7 }, "user"],
      [{ model: "embed-mock", input: "x", user: "u".repeat(513) }, "user"],
      [{ model: "embed-mock", input: "x", stream: true }, "stream"],
    ] as const) {
      const error = (await openai.embeddings.create(body as never).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
      expect(error.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(error.error).toMatchObject({ type: "invalid_request", param });
    }
    expect(mock.requests).toHaveLength(0);
    expect(await ledgerRows(gateway, accountId)).toHaveLength(0);
    const after = await account();
    expect(after.balance).toBe(10n * NANO_PER_USD);
    expect(after.held).toBe(0n);
  });

  it("checks the model: unknown 404, outside the tier 400 not_supported, wrong kind 400 on either route", async () => {
    const unknown = (await openai.embeddings.create({ model: "no-such-model", input: "x" }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(unknown.status).toBe(404);
    const basic = await gateway.createAccount({ balance: "10", tier: "basic" });
    const outside = (await client(gateway, basic.raw)
      .embeddings.create({ model: "embed-mock", input: "x" })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(outside.status).toBe(400);
    expect(outside.error).toMatchObject({ type: "not_supported", param: "model" });
    const chatModel = (await openai.embeddings.create({ model: "gpt-mock", input: "x" }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(chatModel.status).toBe(400);
    expect(chatModel.error).toMatchObject({ type: "invalid_request", param: "model" });
    const onChat = (await openai.chat.completions.create({ model: "embed-mock", messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e)) as InstanceType<
      typeof OpenAI.APIError
    >;
    expect(onChat.status).toBe(400);
    expect(onChat.message).toContain("/v1/embeddings");
    expect(mock.requests).toHaveLength(0);
  });

  it("is listed in /v1/models for its tiers and in /v1/catalog as kind embedding with its input price", async () => {
    expect((await openai.models.list()).data.map((m) => m.id)).toContain("embed-mock");
    const basic = await gateway.createAccount({ balance: "10", tier: "basic" });
    expect((await client(gateway, basic.raw).models.list()).data.map((m) => m.id)).not.toContain("embed-mock");
    const catalog = (await (await fetch(`${gateway.url}/v1/catalog`)).json()) as { data: Array<Record<string, unknown>> };
    expect(catalog.data.find((m) => m.id === "embed-mock")).toMatchObject({
      kind: "embedding",
      modalities: { input: ["text"], output: ["embedding"] },
      pricing: { input_per_million_tokens: "0.13", output_per_million_tokens: "0.00" },
      tiers: ["standard"],
    });
  });

  it("an upstream answering in another shape (readAnswer): the list is built, base64-encoded when asked", async () => {
    const media = upstreams.openai.media;
    const original = media.embeddings!;
    let reported: number | null = 42;
    media.embeddings = { ...original, readAnswer: (doc) => ({ vectors: (doc as { vectors: number[][] }).vectors, promptTokens: reported }) };
    try {
      const vectors = [vector(4, 1), vector(700, 2)];
      mock.handler = (_req, res) => json(res, 200, { vectors });
      const response = await fetch(`${gateway.url}/v1/embeddings`, {
        method: "POST",
        headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "embed-mock", input: ["hello world", "x"], encoding_format: "base64" }),
      });
      expect(await response.json()).toEqual({
        object: "list",
        data: vectors.map((v, index) => ({ object: "embedding", index, embedding: float32Base64(v) })),
        model: "embed-mock",
        // 42 tokens at the model's price, the cost in-band as in x-gateway-cost-usd.
        usage: { prompt_tokens: 42, total_tokens: 42, cost: response.headers.get("x-gateway-cost-usd") },
      });
      expect(response.headers.get("x-gateway-cost-usd")).toBe("0.00000546");
      reported = null; // none reported: the estimate (3 + 1 tokens), in the body and the ledger
      const floats = await openai.embeddings.create({ model: "embed-mock", input: ["hello world", "x"], encoding_format: "float" });
      expect(floats.data.map((d) => d.embedding)).toEqual(vectors);
      expect(floats.usage).toMatchObject({ prompt_tokens: 4, total_tokens: 4 });
      const rows = await ledgerRows(gateway, accountId);
      expect(rows.map((r) => [r.input_tokens, r.estimated])).toEqual([
        [42n, 0n],
        [4n, 1n],
      ]);
    } finally {
      media.embeddings = original;
    }
  });

  it("scrubs the answer and upstream errors; an error charges nothing", async () => {
    const own = await gateway.createAccount({ balance: "10" });
    await gateway.app.ctx.store.upstreamKeys.add({ accountId: own.account.id, provider: "mockai", key: OWN_KEY });
    const v = vector(600, 5);
    mock.handler = (req, res) => json(res, 200, { ...answer(req, [v]), note: `served with ${req.key} by ${mock.url}` });
    const response = await fetch(`${gateway.url}/v1/embeddings`, {
      method: "POST",
      headers: { authorization: `Bearer ${own.raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "embed-mock", input: "x", encoding_format: "base64" }),
    });
    const text = await response.text();
    expect(response.status).toBe(200);
    for (const canary of [OWN_KEY, mock.host]) expect(text).not.toContain(canary);
    expect((JSON.parse(text) as { data: Array<{ embedding: string }> }).data[0]!.embedding).toBe(float32Base64(v));

    mock.handler = (req, res) => json(res, 400, { error: { message: `bad input for key ${req.key} at ${mock.url}` } });
    const error = (await openai.embeddings.create({ model: "embed-mock", input: "x" }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(400);
    expect(error.message).not.toContain(OPENAI_KEYS[0]);
    expect(error.message).not.toContain(mock.host);
    expect(await ledgerRows(gateway, accountId)).toHaveLength(0);
    expect((await account()).held).toBe(0n);
  });
});

describe.runIf(await isPostgresReachable())("embeddings on PostgreSQL", () => {
  it("charges a batch's reported prompt tokens in the ledger", async () => {
    const mock = await startMockUpstream();
    const gateway = await startGateway(embeddingConfig(mock.url), { kind: "postgres" });
    try {
      mock.handler = (req, res) => json(res, 200, answer(req, [vector(4, 1), vector(4, 2)]));
      const { account, raw } = await gateway.createAccount({ balance: "10" });
      const result = await client(gateway, raw).embeddings.create({ model: "embed-mock", input: ["a", "b"] });
      expect(result.data).toHaveLength(2);
      const rows = await ledgerRows(gateway, account.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ route: "embeddings", input_tokens: 1234n, cost_nano: COST_1234 });
      expect((await gateway.app.ctx.store.accounts.get(account.id))!.balance).toBe(10n * NANO_PER_USD - COST_1234);
    } finally {
      await gateway.close();
      await mock.close();
    }
  });
});
