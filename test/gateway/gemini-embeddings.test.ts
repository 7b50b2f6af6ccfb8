// Google's embedContent and batchEmbedContents on the gateway (/v1beta), with the official
// @google/genai SDK's models.embedContent as the client, against an OpenAI-compatible mock and a
// Gemini-native mock, on both databases: Google's answer shape, billing on the route "embeddings"
// exactly as /v1/embeddings bills (the upstream's usage, else the estimate), refusals naming the
// field (nothing charged), the model list's methods, and canary scrubbing.
import { ApiError, GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { geminiEmbeddings, startGeminiMock, type GeminiMock } from "../support/gemini-upstream.js";
import { json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { startGateway, type TestGateway } from "../support/gateway.js";

const OPENAI_KEY = "sk-proj-CANARYgeminiEmbedKEY0123456789";
const GEMINI_KEYS = ["AIzaSyMOCK-gemini-embed-client-0001"];
const NANO_PER_USD = 1_000_000_000n;

function config(openaiUrl: string, geminiUrl: string): string {
  return `
providers:
  mockai:
    type: openai
    base_url: "${openaiUrl}/v1"
    keys: ${JSON.stringify([OPENAI_KEY])}
  google-native:
    type: gemini
    base_url: "${geminiUrl}"
    keys: ${JSON.stringify(GEMINI_KEYS)}
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

/** Floats that float32 and JSON represent exactly. */
const vector = (n: number, seed: number) => Array.from({ length: n }, (_, i) => ((i * 5 + seed * 11) % 64) / 32 - 1);

for (const kind of DATABASE_KINDS) {
  describe(`Gemini API embeddings (${kind})`, () => {
    let mock: MockUpstream;
    let gemini: GeminiMock;
    let gateway: TestGateway;
    let ai: GoogleGenAI;
    let raw: string;
    let accountId: string;

    beforeAll(async () => {
      mock = await startMockUpstream();
      gemini = await startGeminiMock(GEMINI_KEYS);
      gateway = await startGateway(config(mock.url, gemini.url), { kind });
      const created = await gateway.createAccount({ balance: "50" });
      raw = created.raw;
      accountId = created.account.id;
      ai = new GoogleGenAI({ apiKey: raw, httpOptions: { baseUrl: gateway.url } });
    });
    afterAll(async () => {
      await gateway?.close();
      await mock?.close();
      await gemini?.close();
    });
    beforeEach(() => {
      mock.requests.length = 0;
      gemini.requests.length = 0;
    });

    const usageRows = () => gateway.app.ctx.store.db.selectFrom("ledger").selectAll().where("account_id", "=", accountId).where("kind", "=", "usage").orderBy("id").execute();
    const post = (path: string, body: object) =>
      fetch(`${gateway.url}/v1beta/models/${path}`, { method: "POST", headers: { "x-goog-api-key": raw, "content-type": "application/json" }, body: JSON.stringify(body) });

    it("the SDK's embedContent on an OpenAI-compatible upstream: floats asked, Google's batch shape, billed like /v1/embeddings", async () => {
      const [a, b] = [vector(6, 1), vector(6, 2)];
      mock.handler = (_req, res) =>
        json(res, 200, {
          object: "list",
          // Out of order on purpose: the answer follows the inputs' order (index).
          data: [
            { object: "embedding", index: 1, embedding: b },
            { object: "embedding", index: 0, embedding: a },
          ],
          model: "upstream-embed",
          usage: { prompt_tokens: 1000, total_tokens: 1000 },
        });
      const before = (await usageRows()).length;
      const response = await ai.models.embedContent({
        model: "embed-mock",
        contents: ["a red kite", "a blue heron"],
        config: { outputDimensionality: 6, taskType: "RETRIEVAL_DOCUMENT" },
      });
      expect(response.embeddings?.map((e) => e.values)).toEqual([a, b]);
      expect(mock.requests[0]!.url).toBe("/v1/embeddings");
      expect(mock.requests[0]!.body).toEqual({ model: "upstream-embed", input: ["a red kite", "a blue heron"], dimensions: 6, encoding_format: "float" });
      const rows = (await usageRows()).slice(before);
      // 1000 tokens x 0.13 USD per million.
      expect(rows.map((row) => [row.route, Number(row.input_tokens), BigInt(row.cost_nano)])).toEqual([["embeddings", 1000, (1000n * 13n * NANO_PER_USD) / 100n / 1_000_000n]]);
      await gateway.app.ctx.pipeline.requestLog!.flush();
      const logged = await gateway.app.ctx.store.db.selectFrom("request_log").select(["route", "status"]).where("request_id", "=", rows[0]!.request_id).execute();
      expect(logged.map((row) => [row.route, Number(row.status)])).toEqual([["/v1beta/models/{model}:batchEmbedContents", 200]]);
    });

    it("embedContent (one content) answers { embedding: { values } }; a Gemini-native upstream gets batchEmbedContents and is billed its estimate", async () => {
      const v = vector(4, 3);
      gemini.answer = (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(geminiEmbeddings([v])));
      };
      const before = (await usageRows()).length;
      const response = await post("models/gemini-embed:embedContent", {
        model: "models/gemini-embed",
        content: { parts: [{ text: "first" }, { text: "second" }] },
        outputDimensionality: 4,
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ embedding: { values: v } });
      expect(response.headers.get("x-gateway-cost-usd")).toBeTruthy();
      expect(gemini.requests[0]).toMatchObject({ operation: "batchEmbedContents", model: "gemini-embedding-001" });
      expect(gemini.requests[0]!.body).toEqual({ requests: [{ model: "models/gemini-embedding-001", content: { parts: [{ text: "first\nsecond" }] }, outputDimensionality: 4 }] });
      const rows = (await usageRows()).slice(before);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.route).toBe("embeddings");
      expect(Number(rows[0]!.input_tokens)).toBeGreaterThan(0);

      gemini.answer = (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(geminiEmbeddings([vector(4, 4), vector(4, 5)])));
      };
      // Google's taskType and title reach a Gemini upstream with each input, as the client sent them.
      const sdk = await ai.models.embedContent({ model: "gemini-embed", contents: ["x", "y"], config: { taskType: "RETRIEVAL_DOCUMENT", title: "Field notes" } });
      expect(sdk.embeddings?.map((e) => e.values)).toEqual([vector(4, 4), vector(4, 5)]);
      const model = "models/gemini-embedding-001";
      const hints = { taskType: "RETRIEVAL_DOCUMENT", title: "Field notes" };
      expect(gemini.requests[1]!.body).toEqual({
        requests: [
          { model, content: { parts: [{ text: "x" }] }, ...hints },
          { model, content: { parts: [{ text: "y" }] }, ...hints },
        ],
      });
    });

    it("refusals name the field, come in Google's envelope and charge nothing", async () => {
      const before = (await usageRows()).length;
      const cases: Array<[string, object, string]> = [
        ["embed-mock:embedContent", { content: { parts: [{ inlineData: { mimeType: "image/png", data: "AAAA" } }] } }, "content.parts[0].inlineData"],
        ["embed-mock:batchEmbedContents", { requests: [{ model: "models/other", content: { parts: [{ text: "x" }] } }] }, "requests[0].model"],
        [
          "embed-mock:batchEmbedContents",
          {
            requests: [
              { content: { parts: [{ text: "x" }] }, outputDimensionality: 4 },
              { content: { parts: [{ text: "y" }] }, outputDimensionality: 8 },
            ],
          },
          "requests[1].outputDimensionality",
        ],
        ["embed-mock:embedContent", { content: { parts: [{ text: "x" }] }, taskType: "SHOUTING" }, "taskType"],
        ["embed-mock:batchEmbedContents", { requests: Array.from({ length: 101 }, () => ({ content: { parts: [{ text: "x" }] } })) }, "requests"],
      ];
      for (const [path, body, field] of cases) {
        const refused = await post(path, body);
        expect(refused.status, field).toBe(400);
        const error = ((await refused.json()) as { error: { status: string; details: Array<{ metadata: { param: string } }> } }).error;
        expect(error.status).toBe("INVALID_ARGUMENT");
        expect(error.details[0]!.metadata.param).toBe(field);
      }
      // A chat model has no embeddings: refused by kind.
      const chat = await ai.models.embedContent({ model: "gpt-mock", contents: "x" }).catch((error: unknown) => error);
      expect(chat).toBeInstanceOf(ApiError);
      expect((chat as ApiError).status).toBe(400);
      expect(mock.requests).toHaveLength(0);
      expect(gemini.requests).toHaveLength(0);
      expect(await usageRows()).toHaveLength(before);
    });

    it("the model list names the embedding methods of embedding models", async () => {
      const one = await ai.models.get({ model: "embed-mock" });
      expect(one.supportedActions ?? (one as { supportedGenerationMethods?: string[] }).supportedGenerationMethods).toEqual(["embedContent", "batchEmbedContents"]);
    });

    it("scrubs upstream canaries from answers and errors", async () => {
      const leak = `upstream-embed at ${mock.url} with ${OPENAI_KEY}`;
      mock.handler = (_req, res) =>
        json(res, 200, { object: "list", data: [{ object: "embedding", index: 0, embedding: [0.5] }], model: leak, usage: { prompt_tokens: 3, total_tokens: 3 } });
      const answer = await post("embed-mock:embedContent", { content: { parts: [{ text: "x" }] } });
      const text = await answer.text();
      expect(answer.status).toBe(200);
      expect(JSON.parse(text)).toEqual({ embedding: { values: [0.5] } });
      mock.handler = (_req, res) => json(res, 400, { error: { message: leak, type: "invalid_request_error" } });
      const before = (await usageRows()).length;
      const failed = await post("embed-mock:batchEmbedContents", { requests: [{ content: { parts: [{ text: "x" }] } }] });
      const failedText = await failed.text();
      expect(failed.status).toBe(400);
      expect((JSON.parse(failedText) as { error: { status: string } }).error.status).toBe("INVALID_ARGUMENT");
      for (const body of [text, failedText]) for (const canary of [OPENAI_KEY, mock.host]) expect(body).not.toContain(canary);
      expect(await usageRows()).toHaveLength(before);
    });
  });
}
