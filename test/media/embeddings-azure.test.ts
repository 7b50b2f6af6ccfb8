// POST /v1/embeddings on an azure-openai upstream, with the official SDK against the mock Azure
// resource (test/support/mock-azure.ts), which checks the api-key, both API forms' paths and
// api-version, the deployment and the embeddings body: float and base64, batch, exact billing of
// the reported usage, failover on 429, and scrubbing of keys, hosts and Azure's request ids.
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { answerEmbeddings, azureError, startMockAzure, type MockAzure } from "../support/mock-azure.js";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { client, ledgerRows, NANO_PER_USD } from "./support.js";

const KEY_1 = "azkey0CANARYemb1111111111111aaaa";
const KEY_2 = "azkey0CANARYemb2222222222222bbbb";
const KEY_3 = "azkey0CANARYemb3333333333333cccc";

function config(url: string): string {
  return `
providers:
  azure:
    type: azure-openai
    base_url: "${url}"
    keys: ["${KEY_1}"]
    api_version: "2024-10-21"
  azure-v1:
    type: azure-openai
    base_url: "${url}/openai/v1"
    keys: ["${KEY_1}"]
  azure-failover:
    type: azure-openai
    base_url: "${url}"
    keys: ["${KEY_2}", "${KEY_3}"]
models:
  - { id: az-embed, kind: embedding, provider: azure, upstream_model: embed-small-prod, pricing: { input_per_mtok: "0.02" } }
  - { id: az-embed-v1, kind: embedding, provider: azure-v1, upstream_model: embed-small-v1, pricing: { input_per_mtok: "0.02" } }
  - { id: az-embed-failover, kind: embedding, provider: azure-failover, upstream_model: embed-small-prod, pricing: { input_per_mtok: "0.02" } }
tiers:
  standard: { models: ["*"] }
server:
  default_tier: standard
`;
}

/** A vector of `n` floats that float32 represents exactly (so float32 round trips compare equal). */
function vector(n: number, seed: number): number[] {
  return Array.from({ length: n }, (_, i) => ((i * 5 + seed * 11) % 64) / 32 - 1);
}

const float32Base64 = (values: number[]) => Buffer.from(new Float32Array(values).buffer).toString("base64");

// By hand: 1,234 prompt tokens x 0.02 USD per million = 24.68 micro-USD = 24,680 nano-USD.
const COST_1234 = 24_680n;

describe("embeddings on azure-openai", () => {
  let mock: MockAzure;
  let gateway: TestGateway;
  let openai: OpenAI;
  let accountId: string;
  let raw: string;

  beforeAll(async () => {
    mock = await startMockAzure({ keys: [KEY_1, KEY_2, KEY_3], deployments: ["embed-small-prod", "embed-small-v1"] });
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

  it("embeds floats at the deployment's path with the api-version, billing the reported usage", async () => {
    const v = vector(8, 1);
    mock.handler = (req, res) => answerEmbeddings(req, res, [v]);
    const { data, response } = await openai.embeddings.create({ model: "az-embed", input: "a red kite", encoding_format: "float", dimensions: 8 }).withResponse();
    expect(data.data).toEqual([{ object: "embedding", index: 0, embedding: v }]);
    expect(data.model).toBe("az-embed");
    expect(mock.requests[0]).toMatchObject({ form: "deployments", operation: "embeddings", deployment: "embed-small-prod", apiVersion: "2024-10-21", key: KEY_1 });
    expect(mock.requests[0]!.body).toEqual({ model: "embed-small-prod", input: "a red kite", encoding_format: "float", dimensions: 8 });
    expect(response.headers.get("x-gateway-cost-usd")).toBe("0.00002468");

    const rows = await ledgerRows(gateway, accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ route: "embeddings", model: "az-embed", input_tokens: 1234n, output_tokens: 0n, estimated: 0n, cost_nano: COST_1234 });
    const account = (await gateway.app.ctx.store.accounts.get(accountId))!;
    expect(account.balance).toBe(10n * NANO_PER_USD - COST_1234);
    expect(account.held).toBe(0n);
  });

  it("v1 form: a batch in base64 (the SDK's default), the deployment as the body's model, no api-version", async () => {
    const vectors = [vector(256, 1), vector(256, 2), vector(3, 3)];
    mock.handler = (req, res) => answerEmbeddings(req, res, vectors, 9);
    const result = await openai.embeddings.create({ model: "az-embed-v1", input: ["one", "two", "three"] });
    expect(result.data.map((d) => Array.from(d.embedding))).toEqual(vectors);
    expect(mock.requests[0]).toMatchObject({ form: "v1", path: "/openai/v1/embeddings", deployment: "embed-small-v1", apiVersion: null });
    expect(mock.requests[0]!.body).toMatchObject({ input: ["one", "two", "three"], encoding_format: "base64" });

    const response = await fetch(`${gateway.url}/v1/embeddings`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "az-embed-v1", input: [[1, 2, 3], [4]], encoding_format: "base64" }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: Array<{ embedding: string }> }).data.map((d) => d.embedding)).toEqual(vectors.map(float32Base64));
    expect(mock.requests[1]!.body.input).toEqual([[1, 2, 3], [4]]);
    // 9 tokens x 20 nano-USD each, twice.
    expect((await ledgerRows(gateway, accountId)).map((r) => [r.input_tokens, r.cost_nano])).toEqual([
      [9n, 180n],
      [9n, 180n],
    ]);
  });

  it("fails over on 429 to the second key and charges once", async () => {
    mock.handler = (req, res) =>
      mock.requests.length === 1
        ? azureError(res, 429, "429", "Requests to the Embeddings_Create Operation have exceeded call rate limit.", {}, { "retry-after": "3" })
        : answerEmbeddings(req, res, [vector(4, 1)]);
    const { response } = await openai.embeddings.create({ model: "az-embed-failover", input: "x", encoding_format: "float" }).withResponse();
    expect(response.headers.get("x-gateway-attempts")).toBe("2");
    expect(new Set(mock.requests.map((r) => r.key))).toEqual(new Set([KEY_2, KEY_3]));
    expect((await ledgerRows(gateway, accountId)).map((r) => r.cost_nano)).toEqual([COST_1234]);
  });

  it("scrubs keys, hosts and Azure's request ids from answers and errors; an error charges nothing", async () => {
    const requestId = "CANARY-apim-emb-0000-4a5b-9c8d-111111111111";
    mock.responseHeaders = { "apim-request-id": requestId };
    try {
      const v = vector(600, 4);
      mock.handler = (req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        const data = [{ object: "embedding", index: 0, embedding: float32Base64(v) }];
        const note = `served with ${req.key} at ${mock.url} id ${requestId}`;
        res.end(JSON.stringify({ object: "list", data, model: "text-embedding-3-small", usage: { prompt_tokens: 3, total_tokens: 3 }, note }));
      };
      const response = await fetch(`${gateway.url}/v1/embeddings`, {
        method: "POST",
        headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "az-embed", input: "x", encoding_format: "base64" }),
      });
      const text = await response.text();
      expect(response.status).toBe(200);
      expect(text).toContain("[redacted]");
      for (const canary of [KEY_1, mock.host, requestId]) expect(text).not.toContain(canary);
      expect(response.headers.get("apim-request-id")).toBeNull();
      expect((JSON.parse(text) as { data: Array<{ embedding: string }> }).data[0]!.embedding).toBe(float32Base64(v));

      mock.handler = (req, res) => azureError(res, 400, "BadRequest", `Bad input for key ${req.key} at ${mock.url}, request ${requestId}`);
      const error = (await openai.embeddings.create({ model: "az-embed", input: "x" }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(error.status).toBe(400);
      for (const canary of [KEY_1, mock.host, requestId]) expect(JSON.stringify(error.error)).not.toContain(canary);
      expect((await ledgerRows(gateway, accountId)).map((r) => r.input_tokens)).toEqual([3n]);
      expect((await gateway.app.ctx.store.accounts.get(accountId))!.held).toBe(0n);
    } finally {
      mock.responseHeaders = {};
    }
  });
});
