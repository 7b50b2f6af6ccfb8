// The `gemini` upstream type end to end: the official SDKs on all three client routes (Chat,
// Responses, Messages), buffered and streamed, with tools and images, against a mock of Google's
// Gemini API that validates the key header, the path and the body; exact billing of usageMetadata
// with cached content and thoughts; failover across keys; Gemini errors; scrubbing.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { formatUsd } from "../../src/core/money.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { geminiError, geminiResponse, geminiStream, startGeminiMock, type GeminiMock, type GeminiUsage } from "../support/gemini-upstream.js";
import { startGateway, type TestGateway } from "../support/gateway.js";

const KEYS = ["AIzaSyMOCK-gemini-key-first-0001", "AIzaSyMOCK-gemini-key-second-002"];
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

// Gemini 2.5 Flash prices ($/M): input 0.30, cached input 0.075, output (thoughts included) 2.50.
function config(url: string): string {
  return `
providers:
  google-native:
    type: gemini
    base_url: "${url}"
    keys: ${JSON.stringify(KEYS)}
models:
  - id: gemini-mock
    kind: chat
    provider: google-native
    upstream_model: gemini-2.5-flash
    max_output_tokens: 65536
    default_output_tokens: 1000
    pricing: { input_per_mtok: "0.30", cached_input_per_mtok: "0.075", output_per_mtok: "2.50" }
tiers:
  standard: { models: ["*"] }
server:
  default_tier: standard
`;
}

// Shaped like the usage of Google's context-caching example (a long cached document, a short
// question), with thinking on: promptTokenCount includes the cached tokens, thoughts are separate.
const CACHED_THINKING_USAGE: GeminiUsage = {
  promptTokenCount: 696219,
  cachedContentTokenCount: 696190,
  candidatesTokenCount: 214,
  thoughtsTokenCount: 1024,
  totalTokenCount: 697457,
};
// By hand: 29 uncached x 0.30 + 696,190 cached x 0.075 + (214 + 1,024) output x 2.50, in $ per million:
// 8.7 + 52,214.25 + 3,095 = 55,317.95 micro-USD = 55,317,950 nano-USD.
const CACHED_THINKING_COST_NANO = 55_317_950n;

const SMALL_USAGE: GeminiUsage = { promptTokenCount: 20, candidatesTokenCount: 5, totalTokenCount: 25 };
const weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "Weather for a city",
    parameters: { type: "object", additionalProperties: false, properties: { city: { type: "string" } }, required: ["city"] },
  },
};

for (const kind of DATABASE_KINDS) {
  describe(`gemini upstream (${kind})`, () => {
    let mock: GeminiMock;
    let gateway: TestGateway;
    let openai: OpenAI;
    let anthropic: Anthropic;
    let accountId: string;
    let raw: string;

    beforeAll(async () => {
      mock = await startGeminiMock(KEYS);
      gateway = await startGateway(config(mock.url), { kind });
      const created = await gateway.createAccount({ balance: "50" });
      accountId = created.account.id;
      raw = created.raw;
      openai = new OpenAI({ apiKey: raw, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
      anthropic = new Anthropic({ apiKey: raw, baseURL: gateway.url, maxRetries: 0 });
    });
    afterAll(async () => {
      await gateway?.close();
      await mock?.close();
    });
    beforeEach(() => {
      mock.requests.length = 0;
    });

    const usageRows = () => gateway.app.ctx.store.db.selectFrom("ledger").selectAll().where("account_id", "=", accountId).where("kind", "=", "usage").orderBy("id").execute();

    it("bills usageMetadata exactly: cached content at the cached price, thoughts as output (buffered and streamed)", async () => {
      mock.answer = (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(geminiResponse([{ text: "Plan.", thought: true }, { text: "The answer." }], CACHED_THINKING_USAGE)));
      };
      const before = (await usageRows()).length;
      const { data, response } = await openai.chat.completions.create({ model: "gemini-mock", messages: [{ role: "user", content: "Summarise the document." }] }).withResponse();
      expect(data.choices[0]!.message.content).toBe("The answer.");
      // The thought summary is the answer's reasoning, never its content.
      const message: OpenAI.Chat.ChatCompletionMessage & { reasoning_content?: string } = data.choices[0]!.message;
      expect(message.reasoning_content).toBe("Plan.");
      expect(data.usage).toMatchObject({ prompt_tokens: 696219, completion_tokens: 1238, prompt_tokens_details: { cached_tokens: 696190 } });
      expect(response.headers.get("x-gateway-cost-usd")).toBe("0.05531795");

      mock.answer = (_req, res) => geminiStream(res, [[{ text: "Plan.", thought: true }], [{ text: "The " }], [{ text: "answer." }]], CACHED_THINKING_USAGE);
      const stream = await openai.chat.completions.create({ model: "gemini-mock", stream: true, reasoning_effort: "low", messages: [{ role: "user", content: "Again." }] });
      let reasoning = "";
      let content = "";
      for await (const chunk of stream) {
        const delta: OpenAI.Chat.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string } = chunk.choices[0]!.delta;
        reasoning += delta.reasoning_content ?? "";
        content += delta.content ?? "";
      }
      expect([reasoning, content]).toEqual(["Plan.", "The answer."]);
      expect(mock.requests.at(-1)!.body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } });

      const rows = (await usageRows()).slice(before);
      expect(rows).toHaveLength(2);
      for (const row of rows) {
        expect(BigInt(row.cost_nano)).toBe(CACHED_THINKING_COST_NANO);
        expect([Number(row.input_tokens), Number(row.cached_tokens), Number(row.output_tokens), Number(row.reasoning_tokens), Number(row.estimated)]).toEqual([
          696219, 696190, 1238, 1024, 0,
        ]);
      }
    });

    it("Chat, buffered, with tools and an image: the request Gemini receives and the tool calls back", async () => {
      mock.answer = (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(geminiResponse([{ functionCall: { name: "get_weather", args: { city: "Oslo" } } }], SMALL_USAGE)));
      };
      const completion = await openai.chat.completions.create({
        model: "gemini-mock",
        max_tokens: 200,
        tools: [weatherTool],
        tool_choice: "required",
        messages: [
          { role: "system", content: "You are terse." },
          {
            role: "user",
            content: [
              { type: "text", text: "Where is this? Weather there?" },
              { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
            ],
          },
        ],
      });
      const call = completion.choices[0]!.message.tool_calls![0]!;
      expect(completion.choices[0]!.finish_reason).toBe("tool_calls");
      expect(call.type === "function" && [call.function.name, JSON.parse(call.function.arguments) as unknown]).toEqual(["get_weather", { city: "Oslo" }]);
      const sent = mock.requests[0]!;
      expect([sent.path, sent.stream]).toEqual(["/v1beta/models/gemini-2.5-flash:generateContent", false]);
      // The mock refuses any other key (400 API_KEY_INVALID) and an Authorization header next to it.
      expect(KEYS).toContain(sent.key);
      expect(sent.body).toEqual({
        systemInstruction: { parts: [{ text: "You are terse." }] },
        contents: [{ role: "user", parts: [{ text: "Where is this? Weather there?" }, { inlineData: { mimeType: "image/png", data: PNG } }] }],
        tools: [
          {
            functionDeclarations: [
              { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
            ],
          },
        ],
        toolConfig: { functionCallingConfig: { mode: "ANY" } },
        generationConfig: { maxOutputTokens: 200 },
      });

      // The tool result goes back as a functionResponse under the call's name (Gemini has no call ids).
      mock.answer = (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(geminiResponse([{ text: "4 degrees in Oslo." }], SMALL_USAGE)));
      };
      const followUp = await openai.chat.completions.create({
        model: "gemini-mock",
        tools: [weatherTool],
        messages: [
          { role: "user", content: "Weather in Oslo?" },
          { role: "assistant", content: null, tool_calls: [call] },
          { role: "tool", tool_call_id: call.id, content: '{"temperature_c":4}' },
        ],
      });
      expect(followUp.choices[0]!.message.content).toBe("4 degrees in Oslo.");
      expect((mock.requests[1]!.body.contents as unknown[]).slice(1)).toEqual([
        { role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Oslo" } }, thoughtSignature: "skip_thought_signature_validator" }] },
        { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { temperature_c: 4 } } }] },
      ]);
    });

    it("Chat, streamed: text and a tool call, usage when asked", async () => {
      mock.answer = (_req, res) =>
        geminiStream(res, [[{ text: "Let me " }], [{ text: "check." }], [{ functionCall: { name: "get_weather", args: { city: "Rome" } } }]], SMALL_USAGE);
      const stream = await openai.chat.completions.create({
        model: "gemini-mock",
        stream: true,
        stream_options: { include_usage: true },
        tools: [weatherTool],
        messages: [{ role: "user", content: "Rome?" }],
      });
      let text = "";
      const calls: string[] = [];
      let finish: string | null = null;
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? "";
        for (const call of chunk.choices[0]?.delta.tool_calls ?? []) calls.push(`${call.function?.name}:${call.function?.arguments}`);
        finish = chunk.choices[0]?.finish_reason ?? finish;
        usage = chunk.usage ?? usage;
      }
      expect([text, calls, finish]).toEqual(["Let me check.", ['get_weather:{"city":"Rome"}'], "tool_calls"]);
      expect(usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 });
      // The charged cost in-band, as the ledger has it.
      const [row] = await gateway.app.ctx.store.db.selectFrom("ledger").select("cost_nano").where("kind", "=", "usage").orderBy("id", "desc").limit(1).execute();
      expect(usage).toMatchObject({ cost: formatUsd(row!.cost_nano) });
      expect(mock.requests[0]!.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
      expect(mock.requests[0]!.body).not.toHaveProperty("stream");
    });

    it("Responses, buffered with an image and a tool, and streamed", async () => {
      mock.answer = (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(geminiResponse([{ functionCall: { name: "get_weather", args: { city: "Paris" } } }], SMALL_USAGE)));
      };
      const response = await openai.responses.create({
        model: "gemini-mock",
        tools: [{ type: "function", name: "get_weather", parameters: weatherTool.function.parameters, strict: false }],
        input: [
          {
            role: "user",
            content: [
              { type: "input_text", text: "Weather where this was taken?" },
              { type: "input_image", image_url: `data:image/png;base64,${PNG}`, detail: "auto" },
            ],
          },
        ],
      });
      const call = response.output.find((item) => item.type === "function_call");
      expect(call && [call.name, JSON.parse(call.arguments) as unknown]).toEqual(["get_weather", { city: "Paris" }]);
      expect((mock.requests[0]!.body.contents as Array<{ parts: unknown[] }>)[0]!.parts).toContainEqual({ inlineData: { mimeType: "image/png", data: PNG } });

      mock.answer = (_req, res) => geminiStream(res, [[{ text: "Streamed " }], [{ text: "reply." }]], SMALL_USAGE);
      const final = await openai.responses.stream({ model: "gemini-mock", input: "Say streamed" }).finalResponse();
      expect(final.output_text).toBe("Streamed reply.");
      expect(final.usage).toMatchObject({ input_tokens: 20, output_tokens: 5 });
    });

    it("Messages, buffered with an image and a tool, and streamed", async () => {
      mock.answer = (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(geminiResponse([{ text: "Checking." }, { functionCall: { name: "get_weather", args: { city: "Lima" } } }], SMALL_USAGE)));
      };
      const message = await anthropic.messages.create({
        model: "gemini-mock",
        max_tokens: 300,
        system: "Be brief.",
        tools: [{ name: "get_weather", description: "Weather for a city", input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }],
        messages: [
          {
            role: "user",
            content: [
              { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
              { type: "text", text: "Weather here?" },
            ],
          },
        ],
      });
      expect(message.stop_reason).toBe("tool_use");
      expect(message.content).toEqual([
        { type: "text", text: "Checking." },
        { type: "tool_use", id: expect.stringMatching(/^call_[0-9a-f]{24}$/), name: "get_weather", input: { city: "Lima" } },
      ]);
      const sent = mock.requests[0]!.body;
      expect(sent.systemInstruction).toEqual({ parts: [{ text: "Be brief." }] });
      expect(sent.generationConfig).toEqual({ maxOutputTokens: 300 });

      mock.answer = (_req, res) =>
        geminiStream(res, [[{ text: "It is " }], [{ text: "sunny." }, { functionCall: { name: "get_weather", args: { city: "Lima" } } }]], {
          promptTokenCount: 30,
          candidatesTokenCount: 9,
          totalTokenCount: 39,
        });
      const final = await anthropic.messages.stream({ model: "gemini-mock", max_tokens: 300, messages: [{ role: "user", content: "Lima?" }] }).finalMessage();
      expect(final.content).toEqual([
        { type: "text", text: "It is sunny." },
        { type: "tool_use", id: expect.stringMatching(/^call_/), name: "get_weather", input: { city: "Lima" } },
      ]);
      expect(final.usage).toMatchObject({ input_tokens: 30, output_tokens: 9 });
    });

    it("fails over to the second key on a 429 RESOURCE_EXHAUSTED, and charges once", async () => {
      mock.answer = (req, res) => {
        if (mock.requests.length === 1) return geminiError(res, 429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).");
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(geminiResponse([{ text: `ok` }], SMALL_USAGE)));
      };
      const before = (await usageRows()).length;
      const { data, response } = await openai.chat.completions.create({ model: "gemini-mock", messages: [{ role: "user", content: "Hi" }] }).withResponse();
      expect(data.choices[0]!.message.content).toBe("ok");
      expect(response.headers.get("x-gateway-attempts")).toBe("2");
      expect(new Set(mock.requests.map((r) => r.key))).toEqual(new Set(KEYS));
      expect((await usageRows()).length - before).toBe(1);
    });

    it("maps Gemini error bodies to the catalogue and charges nothing", async () => {
      const before = (await usageRows()).length;
      mock.answer = (_req, res) => geminiError(res, 400, "INVALID_ARGUMENT", "Unable to submit request because it has an empty text parameter.");
      const invalid = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gemini-mock", messages: [{ role: "user", content: "x" }] }),
      });
      const body = (await invalid.json()) as { error: { type: string; message: string }; request_id: string };
      expect(invalid.status).toBe(400);
      expect(body.error).toMatchObject({ type: "invalid_request", message: "Upstream error: Unable to submit request because it has an empty text parameter." });
      expect(invalid.headers.get("x-request-id")).toBe(body.request_id);

      mock.answer = (_req, res) => geminiError(res, 503, "UNAVAILABLE", "The model is overloaded. Please try again later.");
      const overloaded = await anthropic.messages.create({ model: "gemini-mock", max_tokens: 10, messages: [{ role: "user", content: "x" }] }).catch((error: unknown) => error);
      expect(overloaded).toBeInstanceOf(Anthropic.APIError);
      expect((overloaded as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
      expect((await usageRows()).length).toBe(before);
    });

    it("a key Gemini refuses (400 API_KEY_INVALID) is the operator's problem, not the client's", async () => {
      const broken = await startGeminiMock(["AIzaSy-some-other-key-entirely"]);
      const other = await startGateway(config(broken.url));
      try {
        const client = new OpenAI({ apiKey: (await other.createAccount()).raw, baseURL: `${other.url}/v1`, maxRetries: 0 });
        const error = await client.chat.completions.create({ model: "gemini-mock", messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.APIError);
        expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
        expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain("contact the gateway operator");
      } finally {
        await other.close();
        await broken.close();
      }
    });

    it("no key, host, responseId or x-goog request id reaches the client", async () => {
      const requestId = "CANARYgoogReq-0123456789abcdef";
      const traceId = "CANARYtrace0123456789abcdef";
      const headers = { "x-goog-request-id": requestId, "x-cloud-trace-context": `${traceId}/1;o=1`, "server-timing": "gfet4t7; dur=812", server: "scaffolding on HTTPServer2" };
      const leak = (key: string) => `key ${key} at ${mock.url}/v1beta/models request ${requestId} trace ${traceId}`;
      const canaries = [...KEYS, mock.host, requestId, traceId, "mockResp01", "mockResp02"];
      const expectClean = (text: string, responseHeaders: Headers) => {
        for (const canary of canaries) expect(text).not.toContain(canary);
        for (const name of ["x-goog-request-id", "x-cloud-trace-context", "server-timing", "server"]) expect(responseHeaders.get(name)).toBeNull();
      };
      const call = async (body: object) => {
        const response = await fetch(`${gateway.url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "gemini-mock", messages: [{ role: "user", content: "x" }], ...body }),
        });
        return { text: await response.text(), headers: response.headers, status: response.status };
      };

      mock.answer = (req, res) => {
        res.writeHead(200, { "content-type": "application/json", ...headers });
        res.end(JSON.stringify(geminiResponse([{ text: leak(req.key) }], SMALL_USAGE)));
      };
      const buffered = await call({});
      expect(buffered.status).toBe(200);
      expect(buffered.text).toContain("[redacted]");
      expectClean(buffered.text, buffered.headers);

      mock.answer = (req, res) => geminiStream(res, [[{ text: leak(req.key) }], [{ text: " done" }]], SMALL_USAGE, "STOP", headers);
      const streamed = await call({ stream: true });
      expect(streamed.text).toContain("[redacted]");
      expectClean(streamed.text, streamed.headers);

      mock.answer = (req, res) => geminiError(res, 400, "INVALID_ARGUMENT", leak(req.key), {}, headers);
      const failed = await call({});
      expect(failed.status).toBe(400);
      expectClean(failed.text, failed.headers);
    });
  });
}
