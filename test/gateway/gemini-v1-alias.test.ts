// Google's methods under /v1/models (the @google/genai SDK with apiVersion "v1"): generateContent,
// streamGenerateContent, countTokens and embedContent answer there as on /v1beta, with Google's
// error envelope, on both databases; GET /v1/models and /v1/models/{id} answer Google's list to a
// caller with x-goog-api-key or ?key= (the SDK's models.list and models.get), OpenAI's to a Bearer key.
import { ApiError, GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { chatCompletion, chatStream, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { startGateway, type TestGateway } from "../support/gateway.js";

function config(openaiUrl: string): string {
  return `
providers:
  mockai:
    type: openai
    base_url: "${openaiUrl}/v1"
    keys: ["sk-mock-gemini-v1-alias-0001"]
models:
  - id: gpt-mock
    kind: chat
    provider: mockai
    upstream_model: upstream-gpt
    pricing: { input_per_mtok: "1.00", output_per_mtok: "2.00" }
  - id: embed-mock
    kind: embedding
    provider: mockai
    upstream_model: upstream-embed
    pricing: { input_per_mtok: "0.13" }
tiers:
  standard: { models: ["*"] }
server:
  default_tier: standard
`;
}

for (const kind of DATABASE_KINDS) {
  describe(`Gemini API under /v1/models (${kind})`, () => {
    let mock: MockUpstream;
    let gateway: TestGateway;
    let ai: GoogleGenAI;
    let raw: string;
    let accountId: string;

    beforeAll(async () => {
      mock = await startMockUpstream();
      gateway = await startGateway(config(mock.url), { kind });
      const created = await gateway.createAccount({ balance: "50" });
      raw = created.raw;
      accountId = created.account.id;
      ai = new GoogleGenAI({ apiKey: raw, apiVersion: "v1", httpOptions: { baseUrl: gateway.url } });
    });
    afterAll(async () => {
      await gateway?.close();
      await mock?.close();
    });
    beforeEach(() => {
      mock.requests.length = 0;
    });

    it("generateContent, its stream, countTokens and embedContent with apiVersion v1", async () => {
      mock.handler = (_req, res) => json(res, 200, chatCompletion("Hello.", { usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }));
      const response = await ai.models.generateContent({ model: "gpt-mock", contents: "Hi", config: { maxOutputTokens: 50 } });
      expect(response.text).toBe("Hello.");
      expect(mock.requests[0]!.body).toMatchObject({ model: "upstream-gpt", max_tokens: 50 });

      mock.handler = (req, res) => chatStream(req, res, ["Str", "eam"], { usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
      let text = "";
      for await (const chunk of await ai.models.generateContentStream({ model: "gpt-mock", contents: "Hi" })) text += chunk.text ?? "";
      expect(text).toBe("Stream");

      const counted = await ai.models.countTokens({ model: "gpt-mock", contents: "How many?" });
      expect(counted.totalTokens).toBeGreaterThan(0);

      mock.handler = (_req, res) =>
        json(res, 200, {
          object: "list",
          data: [{ object: "embedding", index: 0, embedding: [0.25, -0.5] }],
          model: "upstream-embed",
          usage: { prompt_tokens: 2, total_tokens: 2 },
        });
      const embedded = await ai.models.embedContent({ model: "embed-mock", contents: "x" });
      expect(embedded.embeddings?.map((e) => e.values)).toEqual([[0.25, -0.5]]);

      await gateway.app.ctx.pipeline.requestLog!.flush();
      const routes = await gateway.app.ctx.store.db.selectFrom("request_log").select("route").where("account_id", "=", accountId).execute();
      expect(new Set(routes.map((row) => row.route))).toEqual(
        new Set(["/v1/models/{model}:generateContent", "/v1/models/{model}:streamGenerateContent", "/v1/models/{model}:countTokens", "/v1/models/{model}:batchEmbedContents"]),
      );
    });

    it("GET /v1/models with a Google key signal: Google's list and model through the SDK, Google's envelope for refusals", async () => {
      const names: string[] = [];
      for await (const model of await ai.models.list()) names.push(model.name ?? "");
      expect(names.sort()).toEqual(["models/embed-mock", "models/gpt-mock"]);
      const one = await ai.models.get({ model: "gpt-mock" });
      expect(one).toMatchObject({ name: "models/gpt-mock", displayName: "gpt-mock" });
      expect((one as { supportedGenerationMethods?: string[] }).supportedGenerationMethods ?? one.supportedActions).toContain("generateContent");
      const prefixed = await fetch(`${gateway.url}/v1/models/models/embed-mock?key=${raw}`);
      expect(await prefixed.json()).toMatchObject({ name: "models/embed-mock", supportedGenerationMethods: ["embedContent", "batchEmbedContents"] });
      const paged = await fetch(`${gateway.url}/v1/models?pageSize=1`, { headers: { "x-goog-api-key": raw } });
      expect(await paged.json()).toMatchObject({ models: [{ name: "models/gpt-mock" }], nextPageToken: "1" });

      const missing = await fetch(`${gateway.url}/v1/models/nope`, { headers: { "x-goog-api-key": raw } });
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { error: object }).error).toMatchObject({ code: 404, status: "NOT_FOUND" });
      const badKey = await fetch(`${gateway.url}/v1/models`, { headers: { "x-goog-api-key": "mgw_not-a-key" } });
      expect(badKey.status).toBe(401);
      expect(((await badKey.json()) as { error: object }).error).toMatchObject({ code: 401, status: "UNAUTHENTICATED" });
      expect(badKey.headers.get("x-request-id")).toBeTruthy();
    });

    it("refusals come in Google's envelope; GET /v1/models with a Bearer key stays OpenAI's list", async () => {
      const refused = await ai.models.generateContent({ model: "gpt-mock", contents: "x", config: { candidateCount: 2 } }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ApiError);
      expect(JSON.parse((refused as ApiError).message).error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
      const unknownMethod = await fetch(`${gateway.url}/v1/models/gpt-mock:predict`, {
        method: "POST",
        headers: { "x-goog-api-key": raw, "content-type": "application/json" },
        body: "{}",
      });
      expect(unknownMethod.status).toBe(404);

      const list = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${raw}` } });
      expect(((await list.json()) as { object: string }).object).toBe("list");
      const one = await fetch(`${gateway.url}/v1/models/gpt-mock`, { headers: { authorization: `Bearer ${raw}` } });
      expect(await one.json()).toMatchObject({ id: "gpt-mock", object: "model" });
      const missing = await fetch(`${gateway.url}/v1/models/nope`, { headers: { authorization: `Bearer ${raw}` } });
      expect(((await missing.json()) as { error: { type: string } }).error.type).toBeTruthy();
    });
  });
}
