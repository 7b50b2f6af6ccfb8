// Google's Gemini API as a client format (/v1beta), with the official @google/genai SDK as the
// client: generateContent, generateContentStream, countTokens and function calling against an
// OpenAI-compatible mock, an Anthropic mock and a Gemini-native mock (a pass-through), on both
// databases; billing (route generate_content, nothing charged on error, counting never billed),
// Google's error envelope, the key in x-goog-api-key or ?key=, the JSON-array stream, the model list
// and canary scrubbing.
import { ApiError, FunctionCallingConfigMode, GoogleGenAI, Type } from "@google/genai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { geminiResponse, geminiStream, startGeminiMock, type GeminiMock } from "../support/gemini-upstream.js";
import { anthropicMessage, anthropicStream, chatCompletion, chatStream, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";

const GEMINI_KEYS = ["AIzaSyMOCK-gemini-client-key-0001"];
const CANARY_KEY = "sk-proj-CANARYgeminiClientKEY0123456789";
const CANARY_REQUEST_ID = "req_CANARYgeminiClient0123456789";

function config(openaiUrl: string, geminiUrl: string): string {
  return mockConfig({
    openaiUrl,
    openaiKeys: [CANARY_KEY],
    extra: `
  - id: gemini-native
    kind: chat
    provider: google-native
    upstream_model: gemini-2.5-flash
    max_output_tokens: 65536
    default_output_tokens: 1000
    pricing: { input_per_mtok: "0.30", cached_input_per_mtok: "0.075", output_per_mtok: "2.50" }
`,
  })
    .replace("providers:\n", `providers:\n  google-native:\n    type: gemini\n    base_url: "${geminiUrl}"\n    keys: ${JSON.stringify(GEMINI_KEYS)}\n`)
    .replace("standard: { models: [gpt-mock, claude-mock] }", "standard: { models: [gpt-mock, claude-mock, gemini-native] }");
}

const weatherDeclaration = {
  name: "get_weather",
  description: "Weather for a city",
  parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ["city"] },
};

for (const kind of DATABASE_KINDS) {
  describe(`Gemini API clients (${kind})`, () => {
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

    it("generateContent on an OpenAI-compatible upstream: the Chat request, the answer, usageMetadata and one ledger row", async () => {
      mock.handler = (_req, res) =>
        json(res, 200, chatCompletion("Oslo is cold.", { usage: { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52, prompt_tokens_details: { cached_tokens: 8 } } }));
      const before = (await usageRows()).length;
      const response = await ai.models.generateContent({
        model: "gpt-mock",
        contents: "Weather in Oslo?",
        config: { systemInstruction: "You are terse.", maxOutputTokens: 300, temperature: 0.2, topP: 0.9, stopSequences: ["END"], responseMimeType: "application/json" },
      });
      expect(response.text).toBe("Oslo is cold.");
      expect(response.candidates?.[0]?.finishReason).toBe("STOP");
      expect(response.usageMetadata).toMatchObject({ promptTokenCount: 40, candidatesTokenCount: 12, totalTokenCount: 52, cachedContentTokenCount: 8 });
      expect(response.modelVersion).toBe("gpt-mock");
      const sent = mock.requests[0]!;
      expect(sent.url).toBe("/v1/chat/completions");
      expect(sent.body).toMatchObject({
        model: "upstream-gpt",
        messages: [
          { role: "system", content: "You are terse." },
          { role: "user", content: "Weather in Oslo?" },
        ],
        max_tokens: 300,
        temperature: 0.2,
        top_p: 0.9,
        stop: ["END"],
        response_format: { type: "json_object" },
      });
      const rows = (await usageRows()).slice(before);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.route).toBe("generate_content");
      // 32 uncached x $1 + 8 cached x $0.50 + 12 output x $2, per million: 60 micro-USD.
      expect([Number(rows[0]!.input_tokens), Number(rows[0]!.cached_tokens), Number(rows[0]!.output_tokens), BigInt(rows[0]!.cost_nano)]).toEqual([40, 8, 12, 60_000n]);
      // The request log names the method: one registered route serves three.
      await gateway.app.ctx.pipeline.requestLog!.flush();
      const logged = await gateway.app.ctx.store.db.selectFrom("request_log").select(["route", "status"]).where("request_id", "=", rows[0]!.request_id).execute();
      expect(logged.map((row) => [row.route, Number(row.status)])).toEqual([["/v1beta/models/{model}:generateContent", 200]]);
    });

    it("generateContentStream on an Anthropic upstream: text as it arrives, usage in the last chunk", async () => {
      mock.handler = (_req, res) => anthropicStream(res, ["Cold ", "and ", "dark."], { usage: { input: 30, output: 7 } });
      const before = (await usageRows()).length;
      let text = "";
      let last: Awaited<ReturnType<typeof ai.models.generateContent>> | undefined;
      for await (const chunk of await ai.models.generateContentStream({ model: "claude-mock", contents: "Oslo?", config: { maxOutputTokens: 200 } })) {
        text += chunk.text ?? "";
        last = chunk;
      }
      expect(text).toBe("Cold and dark.");
      expect(last?.candidates?.[0]?.finishReason).toBe("STOP");
      expect(last?.usageMetadata).toMatchObject({ promptTokenCount: 30, candidatesTokenCount: 7, totalTokenCount: 37 });
      expect(mock.requests[0]!.url).toBe("/v1/messages");
      expect(mock.requests[0]!.body).toMatchObject({ model: "claude-upstream", max_tokens: 200, stream: true });
      const rows = (await usageRows()).slice(before);
      expect(rows.map((row) => [row.route, Number(row.input_tokens), Number(row.output_tokens)])).toEqual([["generate_content", 30, 7]]);
    });

    it("function calling both ways on an Anthropic upstream: the call with its id, the functionResponse as a tool_result", async () => {
      mock.handler = (_req, res) => json(res, 200, anthropicMessage("", { toolUse: { id: "toolu_01", name: "get_weather", input: { city: "Oslo" } } }));
      const tools = [{ functionDeclarations: [weatherDeclaration] }];
      const first = await ai.models.generateContent({
        model: "claude-mock",
        contents: "Weather in Oslo?",
        config: { tools, toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ["get_weather"] } }, maxOutputTokens: 100 },
      });
      expect(first.functionCalls).toEqual([{ id: "toolu_01", name: "get_weather", args: { city: "Oslo" } }]);
      const sentTools = mock.requests[0]!.body;
      expect(sentTools.tools).toMatchObject([
        { name: "get_weather", description: "Weather for a city", input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
      ]);
      expect(sentTools.tool_choice).toMatchObject({ type: "tool", name: "get_weather" });

      mock.handler = (_req, res) => json(res, 200, anthropicMessage("It is -3 in Oslo."));
      const second = await ai.models.generateContent({
        model: "claude-mock",
        contents: [
          { role: "user", parts: [{ text: "Weather in Oslo?" }] },
          first.candidates![0]!.content!,
          { role: "user", parts: [{ functionResponse: { id: "toolu_01", name: "get_weather", response: { temperature: -3 } } }] },
        ],
        config: { tools, maxOutputTokens: 100 },
      });
      expect(second.text).toBe("It is -3 in Oslo.");
      const history = mock.requests[1]!.body.messages;
      expect(history[1]).toMatchObject({ role: "assistant", content: [{ type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Oslo" } }] });
      expect(history[2]).toMatchObject({ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01", content: '{"temperature":-3}' }] });
    });

    it("a streamed function call on an OpenAI-compatible upstream comes out whole", async () => {
      mock.handler = (req, res) =>
        chatStream(
          req,
          res,
          [
            { tool_calls: [{ index: 0, id: "call_7", type: "function", function: { name: "get_weather", arguments: "" } }] },
            { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
            { tool_calls: [{ index: 0, function: { arguments: '"Rome"}' } }] },
          ],
          { finish: "tool_calls", usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 } },
        );
      const calls: unknown[] = [];
      for await (const chunk of await ai.models.generateContentStream({
        model: "gpt-mock",
        contents: "Rome?",
        config: { tools: [{ functionDeclarations: [weatherDeclaration] }] },
      })) {
        calls.push(...(chunk.functionCalls ?? []));
      }
      expect(calls).toEqual([{ id: "call_7", name: "get_weather", args: { city: "Rome" } }]);
      expect(mock.requests[0]!.body.tools[0].function.parameters).toEqual({ type: "object", properties: { city: { type: "string" } }, required: ["city"] });
    });

    it("countTokens answers the gateway's estimate and is never billed", async () => {
      const before = (await usageRows()).length;
      const counted = await ai.models.countTokens({ model: "gpt-mock", contents: "How many tokens is this sentence?" });
      expect(counted.totalTokens).toBeGreaterThan(0);
      expect(mock.requests).toHaveLength(0);
      expect(await usageRows()).toHaveLength(before);
    });

    it("countTokens on a Gemini-native upstream is the upstream's count (model renamed, answer scrubbed), never billed", async () => {
      gemini.answer = (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ totalTokens: 123, cachedContentTokenCount: 0, promptTokensDetails: [{ modality: "TEXT", tokenCount: 123 }], note: CANARY_REQUEST_ID }));
      };
      const before = (await usageRows()).length;
      const counted = await ai.models.countTokens({ model: "gemini-native", contents: "How many tokens is this sentence?" });
      expect(counted.totalTokens).toBe(123);
      const sent = gemini.requests[0]!;
      expect([sent.model, sent.operation]).toEqual(["gemini-2.5-flash", "countTokens"]);
      expect(sent.body).toEqual({ contents: [{ role: "user", parts: [{ text: "How many tokens is this sentence?" }] }] });

      // A whole generateContentRequest: its model is the upstream's, whatever the client named.
      const response = await fetch(`${gateway.url}/v1beta/models/models%2Fgemini-native:countTokens`, {
        method: "POST",
        headers: { "x-goog-api-key": raw, "content-type": "application/json" },
        body: JSON.stringify({ generateContentRequest: { model: "models/gemini-native", contents: [{ role: "user", parts: [{ text: "Hi" }] }] } }),
      });
      const text = await response.text();
      expect(response.status, text).toBe(200);
      expect(JSON.parse(text)).toMatchObject({ totalTokens: 123 });
      expect(text).not.toContain(CANARY_REQUEST_ID);
      expect(gemini.requests[1]!.body).toEqual({ generateContentRequest: { model: "models/gemini-2.5-flash", contents: [{ role: "user", parts: [{ text: "Hi" }] }] } });

      // The upstream's refusal comes back in Google's envelope, scrubbed.
      gemini.answer = (_req, res) => {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { code: 400, status: "INVALID_ARGUMENT", message: `bad request ${GEMINI_KEYS[0]} at ${gemini.url}` } }));
      };
      const refused = await fetch(`${gateway.url}/v1beta/models/gemini-native:countTokens`, {
        method: "POST",
        headers: { "x-goog-api-key": raw, "content-type": "application/json" },
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Hi" }] }] }),
      });
      const refusedText = await refused.text();
      expect(refused.status).toBe(400);
      expect(JSON.parse(refusedText).error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
      for (const canary of [GEMINI_KEYS[0]!, gemini.host]) expect(refusedText).not.toContain(canary);
      expect(await usageRows()).toHaveLength(before);
    });

    it("a Gemini-native upstream is a pass-through: the body untouched, the model renamed, usageMetadata billed", async () => {
      gemini.answer = (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify(
            geminiResponse([{ text: "Native." }], { promptTokenCount: 10, candidatesTokenCount: 4, thoughtsTokenCount: 6, totalTokenCount: 20 }, "STOP", {
              responseId: CANARY_REQUEST_ID,
            }),
          ),
        );
      };
      const before = (await usageRows()).length;
      const contents = [
        { role: "user", parts: [{ text: "Hi" }] },
        { role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Oslo" } }, thoughtSignature: "c2lnbmF0dXJl" }] },
        { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { temperature: -3 } } }] },
      ];
      const response = await ai.models.generateContent({
        model: "gemini-native",
        contents,
        config: { tools: [{ functionDeclarations: [weatherDeclaration] }], maxOutputTokens: 500 },
      });
      expect(response.text).toBe("Native.");
      expect(response.modelVersion).toBe("gemini-native");
      expect(response.responseId).toBeUndefined();
      const sent = gemini.requests[0]!;
      expect([sent.model, sent.operation]).toEqual(["gemini-2.5-flash", "generateContent"]);
      expect(sent.body.contents).toEqual(contents);
      const rows = (await usageRows()).slice(before);
      expect(rows.map((row) => [Number(row.input_tokens), Number(row.output_tokens), Number(row.reasoning_tokens)])).toEqual([[10, 10, 6]]);

      gemini.answer = (_req, res) => geminiStream(res, [[{ text: "Str" }], [{ text: "eamed." }]], { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 });
      let text = "";
      for await (const chunk of await ai.models.generateContentStream({ model: "models/gemini-native", contents: "Stream" })) text += chunk.text ?? "";
      expect(text).toBe("Streamed.");
      expect(gemini.requests[1]!.operation).toBe("streamGenerateContent");
    });

    it("refusals come in Google's envelope with the gateway's type inside, and nothing is charged", async () => {
      const before = (await usageRows()).length;
      const refused = await ai.models
        .generateContent({ model: "gpt-mock", contents: "x", config: { candidateCount: 2 } })
        .then(() => null)
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).status).toBe(400);
      const body = JSON.parse((refused as ApiError).message);
      expect(body.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
      expect(body.error.message).toContain("generationConfig.candidateCount");
      expect(body.error.details[0]).toMatchObject({ reason: "INVALID_REQUEST", metadata: { type: "invalid_request", param: "generationConfig.candidateCount" } });

      const unsupported = await fetch(`${gateway.url}/v1beta/models/gpt-mock:generateContent`, {
        method: "POST",
        headers: { "x-goog-api-key": raw, "content-type": "application/json" },
        body: JSON.stringify({ contents: [{ parts: [{ text: "x" }] }], cachedContent: "cachedContents/abc" }),
      });
      expect(unsupported.status).toBe(400);
      expect(unsupported.headers.get("x-request-id")).toBeTruthy();
      const unsupportedBody = (await unsupported.json()) as { error: { details: Array<{ metadata: object }> } };
      expect(unsupportedBody.error.details[0]!.metadata).toMatchObject({ param: "cachedContent", request_id: unsupported.headers.get("x-request-id") });

      const anonymous = await fetch(`${gateway.url}/v1beta/models/gpt-mock:generateContent`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(anonymous.status).toBe(401);
      expect(((await anonymous.json()) as { error: object }).error).toMatchObject({ code: 401, status: "UNAUTHENTICATED" });
      expect(mock.requests).toHaveLength(0);
      expect(await usageRows()).toHaveLength(before);
    });

    it("the key in ?key=, and without alt=sse the stream is one JSON array", async () => {
      mock.handler = (req, res) => chatStream(req, res, ["A", "B"], { usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
      const response = await fetch(`${gateway.url}/v1beta/models/gpt-mock:streamGenerateContent?key=${raw}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "x" }] }] }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("application/json");
      const chunks = JSON.parse(await response.text()) as Array<{
        candidates: Array<{ content?: { parts: Array<{ text: string }> }; finishReason?: string }>;
        usageMetadata?: object;
      }>;
      expect(chunks.map((c) => c.candidates[0]!.content?.parts[0]?.text ?? c.candidates[0]!.finishReason)).toEqual(["A", "B", "STOP"]);
      expect(chunks.at(-1)!.usageMetadata).toMatchObject({ promptTokenCount: 3, candidatesTokenCount: 2 });

      const conflicting = await fetch(`${gateway.url}/v1beta/models?key=${raw}`, { headers: { "x-goog-api-key": "sk-other-key" } });
      expect(conflicting.status).toBe(401);
    });

    it("lists the key's models in Google's shape, and one model by name", async () => {
      const names: string[] = [];
      for await (const model of await ai.models.list()) names.push(model.name ?? "");
      expect(names.sort()).toEqual(["models/claude-mock", "models/gemini-native", "models/gpt-mock"]);
      const one = await ai.models.get({ model: "gpt-mock" });
      expect(one).toMatchObject({ name: "models/gpt-mock", inputTokenLimit: 128000, outputTokenLimit: 4096 });
      expect(one.supportedActions ?? (one as { supportedGenerationMethods?: string[] }).supportedGenerationMethods).toContain("generateContent");
      const hidden = await fetch(`${gateway.url}/v1beta/models/premium-mock`, { headers: { "x-goog-api-key": raw } });
      expect(hidden.status).toBe(404);
      expect(((await hidden.json()) as { error: { status: string } }).error.status).toBe("NOT_FOUND");
    });

    it("scrubs upstream canaries from answers, streams and errors on the Gemini route", async () => {
      const leak = `key ${CANARY_KEY} at ${mock.url} id ${CANARY_REQUEST_ID}`;
      mock.handler = (_req, res) => json(res, 200, chatCompletion(leak), { "x-request-id": CANARY_REQUEST_ID });
      const post = (path: string) =>
        fetch(`${gateway.url}/v1beta/models/${path}`, {
          method: "POST",
          headers: { "x-goog-api-key": raw, "content-type": "application/json" },
          body: JSON.stringify({ contents: [{ parts: [{ text: "x" }] }] }),
        });
      const buffered = await post("gpt-mock:generateContent");
      mock.handler = (req, res) => chatStream(req, res, [leak]);
      const streamed = await post("gpt-mock:streamGenerateContent?alt=sse");
      mock.handler = (_req, res) => json(res, 400, { error: { message: leak, type: "invalid_request_error" } });
      const failed = await post("gpt-mock:generateContent");
      expect(failed.status).toBe(400);
      for (const answer of [buffered, streamed, failed]) {
        const text = await answer.text();
        for (const canary of [CANARY_KEY, CANARY_REQUEST_ID, mock.host]) expect(text).not.toContain(canary);
        expect(answer.headers.get("x-request-id")).not.toBe(CANARY_REQUEST_ID);
      }
    });
  });
}
