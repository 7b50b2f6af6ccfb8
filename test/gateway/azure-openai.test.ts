// The azure-openai upstream end to end, with the official SDKs on all three client routes against a
// mock Azure resource that checks the api-key, the path and api-version of both API forms, the
// deployment and the body (test/support/mock-azure.ts): Chat buffered and streamed with tools and
// images, the Messages and Responses bridges, Responses pass-through, the Images API, the v1 form,
// content filtering, exact billing with cached tokens, failover across keys, and scrubbing.
import type { ServerResponse } from "node:http";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { answerChat, answerImages, answerResponses, azureError, azureHeaders, startMockAzure, type AzureRequest, type MockAzure } from "../support/mock-azure.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { startGateway, type TestGateway } from "../support/gateway.js";

const KEY_1 = "azkey0CANARY1111111111111111aaaa";
const KEY_2 = "azkey0CANARY2222222222222222bbbb";
// The failover provider's own keys: a key that answered 429 cools down wherever it is used.
const KEY_3 = "azkey0CANARY3333333333333333cccc";
const KEY_4 = "azkey0CANARY4444444444444444dddd";
const DEFAULT_VERSION = "2025-04-01-preview";

export function azureConfig(url: string): string {
  return `
providers:
  azure:
    type: azure-openai
    base_url: "${url}"
    keys: ["${KEY_1}"]
  azure-full:
    type: azure-openai
    base_url: "${url}/"
    keys: ["${KEY_1}"]
    api_version: "2025-03-01-preview"
    apis: [chat, responses, images]
  azure-v1:
    type: azure-openai
    base_url: "${url}/openai/v1"
    keys: ["${KEY_2}"]
    apis: [chat, responses]
  azure-failover:
    type: azure-openai
    base_url: "${url}"
    keys: ["${KEY_3}", "${KEY_4}"]
models:
  - id: az-gpt
    kind: chat
    provider: azure
    upstream_model: gpt-4o-prod
    modalities: { input: [text, image], output: [text] }
    pricing: { input_per_mtok: "2.50", cached_input_per_mtok: "1.25", output_per_mtok: "10.00" }
  - { id: az-gpt-full, kind: chat, provider: azure-full, upstream_model: gpt-4o-prod, pricing: { input_per_mtok: "2.50", cached_input_per_mtok: "1.25", output_per_mtok: "10.00" } }
  - { id: az-gpt-v1, kind: chat, provider: azure-v1, upstream_model: gpt-4o-v1, pricing: { input_per_mtok: "2.50", output_per_mtok: "10.00" } }
  - { id: az-gpt-failover, kind: chat, provider: azure-failover, upstream_model: gpt-4o-prod, pricing: { input_per_mtok: "2.50", output_per_mtok: "10.00" } }
  - { id: az-image, kind: image, provider: azure-full, upstream_model: gpt-image-1-prod, pricing: { per_image: { default: "0.04" } } }
`;
}

const WEATHER_TOOL = { type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };
const TOOL_CALL = { id: "call_az9", name: "get_weather", arguments: '{"city":"Oslo"}' };
const IMAGE_MESSAGE = {
  role: "user" as const,
  content: [
    { type: "text" as const, text: "Where is this? Then the weather there." },
    { type: "image_url" as const, image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
  ],
};

describe("azure-openai upstream", () => {
  let mock: MockAzure;
  let gateway: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let keyId: string;

  beforeAll(async () => {
    mock = await startMockAzure({ keys: [KEY_1, KEY_2, KEY_3, KEY_4], deployments: ["gpt-4o-prod", "gpt-4o-v1", "gpt-image-1-prod"] });
    gateway = await startGateway(azureConfig(mock.url));
    const { raw, key } = await gateway.createAccount({ balance: "50" });
    keyId = key.id;
    openai = new OpenAI({ apiKey: raw, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: raw, baseURL: gateway.url, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });
  beforeEach(() => {
    mock.requests.length = 0;
    mock.responseHeaders = azureHeaders();
    mock.handler = (req, res) => answerChat(req, res, { text: "Hello from Azure." });
  });

  const costOf = async (requestId: string) =>
    await gateway.app.ctx.store.db.selectFrom("ledger").select(["cost_nano", "input_tokens", "output_tokens"]).where("request_id", "=", requestId).executeTakeFirstOrThrow();

  function expectDeploymentRequest(req: AzureRequest, operation: string, apiVersion = DEFAULT_VERSION) {
    expect(req).toMatchObject({ form: "deployments", operation, deployment: "gpt-4o-prod", apiVersion, key: KEY_1 });
  }

  describe("/v1/chat/completions", () => {
    it("buffered, with tools and an image: addressed to the deployment, billed exactly with cached tokens", async () => {
      mock.handler = (req, res) => answerChat(req, res, { toolCalls: [TOOL_CALL], usage: { prompt_tokens: 120, completion_tokens: 18, cached_tokens: 64 } });
      const { data, response } = await openai.chat.completions.create({ model: "az-gpt", messages: [IMAGE_MESSAGE], tools: [WEATHER_TOOL] }).withResponse();
      expect(data.model).toBe("az-gpt");
      expect(data.choices[0]!.finish_reason).toBe("tool_calls");
      expect(data.choices[0]!.message.tool_calls).toEqual([{ id: "call_az9", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }]);
      // Azure's filter annotations reach the client as they came.
      expect(data).toHaveProperty("prompt_filter_results");
      expect(data.choices[0]).toHaveProperty("content_filter_results");
      const sent = mock.requests[0]!;
      expectDeploymentRequest(sent, "chat/completions");
      expect(sent.body.model).toBe("gpt-4o-prod");
      expect(sent.body.messages[0].content[1]).toEqual({ type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } });
      expect(sent.body.tools[0].function.name).toBe("get_weather");
      // (120 - 64) x $2.50 + 64 x $1.25 + 18 x $10, per million tokens = $0.0004.
      expect(response.headers.get("x-gateway-cost-usd")).toBe("0.0004");
      expect(await costOf(response.headers.get("x-request-id")!)).toEqual({ cost_nano: 400_000n, input_tokens: 120n, output_tokens: 18n });
    });

    it("streamed: the prompt-filter chunk passes, tool calls assemble, usage is billed", async () => {
      mock.handler = (req, res) =>
        answerChat(req, res, { text: "Let me check. ", toolCalls: [TOOL_CALL], usage: { prompt_tokens: 200, completion_tokens: 40, cached_tokens: 100 } });
      const stream = openai.chat.completions.stream({ model: "az-gpt", messages: [IMAGE_MESSAGE], tools: [WEATHER_TOOL], stream_options: { include_usage: true } });
      const completion = await stream.finalChatCompletion();
      expect(completion.choices[0]!.message.content).toBe("Let me check. ");
      expect(completion.choices[0]!.message.tool_calls![0]!.function).toEqual({ name: "get_weather", arguments: '{"city":"Oslo"}' });
      expect(completion.usage).toMatchObject({ prompt_tokens: 200, completion_tokens: 40, prompt_tokens_details: { cached_tokens: 100 } });
      expect(mock.requests[0]!.body.stream_options).toEqual({ include_usage: true });
      // (100 x 2.50 + 100 x 1.25 + 40 x 10) / 1e6 USD = 775 nano-USD x 1000.
      const rows = await gateway.app.ctx.store.db.selectFrom("ledger").select("cost_nano").where("key_id", "=", keyId).orderBy("id", "desc").limit(1).execute();
      expect(rows[0]!.cost_nano).toBe(775_000n);
      expect(completion.usage).toMatchObject({ cost: "0.000775" }); // in-band too
    });

    it("content_filter finish, buffered and streamed, reaches the SDK as finish_reason", async () => {
      mock.handler = (req, res) => answerChat(req, res, { text: "The story", finish: "content_filter" });
      const buffered = await openai.chat.completions.create({ model: "az-gpt", messages: [{ role: "user", content: "x" }] });
      expect(buffered.choices[0]!.finish_reason).toBe("content_filter");
      const streamed = await openai.chat.completions.stream({ model: "az-gpt", messages: [{ role: "user", content: "x" }] }).finalChatCompletion();
      expect(streamed.choices[0]!.finish_reason).toBe("content_filter");
      expect(streamed.choices[0]!.message.content).toBe("The story");
    });

    it("Azure's content-filter error is a 400 the SDK reads, and nothing is charged", async () => {
      const { account, raw } = await gateway.createAccount({ balance: "1" });
      const client = new OpenAI({ apiKey: raw, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
      mock.handler = (_req, res) =>
        azureError(res, 400, "content_filter", "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.", {
          param: "prompt",
          status: 400,
          innererror: { code: "ResponsibleAIPolicyViolation", content_filter_result: { jailbreak: { filtered: true, detected: true } } },
        });
      const error = await client.chat.completions.create({ model: "az-gpt", messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain("content management policy");
      expect((await gateway.app.ctx.store.accounts.get(account.id))!.balance).toBe(1_000_000_000n);
    });
  });

  describe("/v1/messages and /v1/responses over Azure Chat", () => {
    it("messages.create with tools and an image", async () => {
      mock.handler = (req, res) => answerChat(req, res, { toolCalls: [TOOL_CALL], usage: { prompt_tokens: 50, completion_tokens: 9, cached_tokens: 20 } });
      const message = await anthropic.messages.create({
        model: "az-gpt",
        max_tokens: 200,
        tools: [{ name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }],
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "Weather where this is?" },
              { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
            ],
          },
        ],
      });
      expect(message.stop_reason).toBe("tool_use");
      expect(message.content).toEqual([{ type: "tool_use", id: "call_az9", name: "get_weather", input: { city: "Oslo" } }]);
      expect(message.usage).toMatchObject({ input_tokens: 30, cache_read_input_tokens: 20, output_tokens: 9 });
      expectDeploymentRequest(mock.requests[0]!, "chat/completions");
      expect(mock.requests[0]!.body.messages[0].content[1]).toEqual({ type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } });
    });

    it("messages.stream: text and a tool call, and a content filter as refusal", async () => {
      mock.handler = (req, res) => answerChat(req, res, { text: "Checking Oslo. ", toolCalls: [TOOL_CALL] });
      const message = await anthropic.messages.stream({ model: "az-gpt", max_tokens: 200, messages: [{ role: "user", content: "Weather in Oslo?" }] }).finalMessage();
      expect(message.content).toEqual([
        { type: "text", text: "Checking Oslo. " },
        { type: "tool_use", id: "call_az9", name: "get_weather", input: { city: "Oslo" } },
      ]);
      expect(message.id).toBe("msg_AZmock1");
      mock.handler = (req, res) => answerChat(req, res, { text: "The story", finish: "content_filter" });
      const filtered = await anthropic.messages.stream({ model: "az-gpt", max_tokens: 200, messages: [{ role: "user", content: "x" }] }).finalMessage();
      expect(filtered.stop_reason).toBe("refusal");
    });

    it("responses.create and responses.stream with tools (apis without responses: bridged)", async () => {
      mock.handler = (req, res) => answerChat(req, res, { toolCalls: [TOOL_CALL] });
      const tools = [{ type: "function" as const, name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }];
      const buffered = await openai.responses.create({ model: "az-gpt", input: "Weather in Oslo?", tools, store: false });
      expect(buffered.output).toEqual([expect.objectContaining({ type: "function_call", call_id: "call_az9", name: "get_weather", arguments: '{"city":"Oslo"}' })]);
      mock.handler = (req, res) => answerChat(req, res, { text: "Sunny in Oslo." });
      const streamed = await openai.responses.stream({ model: "az-gpt", input: "Weather in Oslo?", store: false }).finalResponse();
      expect(streamed.output_text).toBe("Sunny in Oslo.");
      expect(mock.requests.map((r) => r.operation)).toEqual(["chat/completions", "chat/completions"]);
    });
  });

  describe("Responses pass-through and images (apis: [chat, responses, images])", () => {
    it("responses.create and responses.stream go to /openai/responses with the provider's api_version", async () => {
      mock.handler = (req, res) => answerResponses(req, res, "Passed through.");
      const { data, response } = await openai.responses.create({ model: "az-gpt-full", input: "hi" }).withResponse();
      expect(data.output_text).toBe("Passed through.");
      expect(data.model).toBe("az-gpt-full");
      expect(mock.requests[0]).toMatchObject({
        form: "deployments",
        operation: "responses",
        path: "/openai/responses",
        apiVersion: "2025-03-01-preview",
        deployment: "gpt-4o-prod",
      });
      // (20 x 2.50 + 10 x 1.25 + 7 x 10) / 1e6 USD.
      expect((await costOf(response.headers.get("x-request-id")!)).cost_nano).toBe(132_500n);
      const streamed = await openai.responses.stream({ model: "az-gpt-full", input: "hi" }).finalResponse();
      expect(streamed.output_text).toBe("Passed through.");
    });

    it("images.generate goes to the image deployment and is charged per image", async () => {
      mock.handler = (req, res) => answerImages(req, res);
      const { data, response } = await openai.images.generate({ model: "az-image", prompt: "a red kite", n: 2, size: "1024x1024" }).withResponse();
      expect(data.data).toHaveLength(2);
      expect(mock.requests[0]).toMatchObject({
        operation: "images/generations",
        deployment: "gpt-image-1-prod",
        path: "/openai/deployments/gpt-image-1-prod/images/generations",
        apiVersion: "2025-03-01-preview",
      });
      expect(mock.requests[0]!.body).toMatchObject({ prompt: "a red kite", n: 2 });
      expect(response.headers.get("x-gateway-cost-usd")).toBe("0.08");
    });
  });

  describe("the v1 API (base_url ending in /openai/v1)", () => {
    it("chat and responses use OpenAI's paths, the deployment as model, no api-version", async () => {
      const chat = await openai.chat.completions.create({ model: "az-gpt-v1", messages: [{ role: "user", content: "hi" }] });
      expect(chat.choices[0]!.message.content).toBe("Hello from Azure.");
      mock.handler = (req, res) => answerResponses(req, res, "v1 response");
      const streamed = await openai.responses.stream({ model: "az-gpt-v1", input: "hi" }).finalResponse();
      expect(streamed.output_text).toBe("v1 response");
      expect(mock.requests.map((r) => [r.form, r.path, r.apiVersion, r.deployment, r.key])).toEqual([
        ["v1", "/openai/v1/chat/completions", null, "gpt-4o-v1", KEY_2],
        ["v1", "/openai/v1/responses", null, "gpt-4o-v1", KEY_2],
      ]);
    });
  });

  it("fails over to the next key when Azure answers 429", async () => {
    mock.handler = (req, res) =>
      mock.requests.length === 1
        ? azureError(
            res,
            429,
            "429",
            "Requests to the ChatCompletions_Create Operation have exceeded the token rate limit. Please retry after 7 seconds.",
            {},
            { "retry-after": "7" },
          )
        : answerChat(req, res, { text: "second key" });
    const { data, response } = await openai.chat.completions.create({ model: "az-gpt-failover", messages: [{ role: "user", content: "hi" }] }).withResponse();
    expect(data.choices[0]!.message.content).toBe("second key");
    expect(response.headers.get("x-gateway-attempts")).toBe("2");
    expect(new Set(mock.requests.map((r) => r.key))).toEqual(new Set([KEY_3, KEY_4]));
    expect(await gateway.app.ctx.store.db.selectFrom("ledger").select("id").where("request_id", "=", response.headers.get("x-request-id")!).execute()).toHaveLength(1);
  });

  describe("scrubbing", () => {
    const IDS = {
      "apim-request-id": "CANARY-apim-6f1c2d3e-0000-4a5b-9c8d-111111111111",
      "x-ms-request-id": "CANARY-msreq-22222222-3333-4444-5555-666666666666",
      "x-ms-client-request-id": "CANARY-msclient-77777777-8888-9999",
      "x-request-id": "CANARY-xreq-aaaaaaaa-bbbb-cccc-dddd",
    };
    const canaries = () => [...Object.values(IDS), KEY_1, KEY_2, KEY_3, KEY_4, mock.host, mock.url];
    const leak = (req: AzureRequest) => `key ${req.key} at ${mock.url}/openai/deployments/${req.deployment}, ${Object.values(IDS).join(" ")}`;

    function expectClean(text: string, headers: Headers) {
      for (const canary of canaries()) expect(text).not.toContain(canary);
      for (const name of Object.keys(IDS)) if (name !== "x-request-id") expect(headers.get(name)).toBeNull();
      expect(headers.get("x-request-id")).not.toBe(IDS["x-request-id"]);
      expect(headers.get("x-ms-region")).toBeNull();
    }

    async function call(path: string, body: object) {
      const response = await fetch(`${gateway.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${openai.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: response.status, headers: response.headers, text: await response.text() };
    }

    beforeEach(() => {
      mock.responseHeaders = { ...IDS };
    });

    it.each([
      ["/v1/chat/completions", false],
      ["/v1/chat/completions", true],
      ["/v1/messages", true],
      ["/v1/responses", true],
    ])("%s (stream: %s): request ids, keys and hosts never reach the client", async (path, stream) => {
      mock.handler = (req, res) => answerChat(req, res, { text: leak(req) });
      const body =
        path === "/v1/responses" ? { model: "az-gpt", input: "x", stream, store: false } : { model: "az-gpt", max_tokens: 50, messages: [{ role: "user", content: "x" }], stream };
      const result = await call(path, body);
      expect(result.status).toBe(200);
      expect(result.text).toContain("[redacted]");
      expectClean(result.text, result.headers);
    });

    it("error bodies", async () => {
      mock.handler = (req: AzureRequest, res: ServerResponse) => azureError(res, 400, "BadRequest", `Invalid request ${leak(req)}`);
      const result = await call("/v1/chat/completions", { model: "az-gpt", messages: [{ role: "user", content: "x" }] });
      expect(result.status).toBe(400);
      expectClean(result.text, result.headers);
    });
  });
});

// One case on PostgreSQL (where reachable; CI always has it): a streamed chat billed exactly.
for (const kind of DATABASE_KINDS.filter((k) => k === "postgres")) {
  describe(`azure-openai upstream on ${kind}`, () => {
    it("streams a chat completion and bills its usage exactly", async () => {
      const mock = await startMockAzure({ keys: [KEY_1], deployments: ["gpt-4o-prod"] });
      const gateway = await startGateway(azureConfig(mock.url), { kind });
      try {
        const { raw } = await gateway.createAccount({ balance: "5" });
        const openai = new OpenAI({ apiKey: raw, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
        mock.handler = (req, res) => answerChat(req, res, { text: "Hello from Azure on Postgres.", usage: { prompt_tokens: 1000, completion_tokens: 100, cached_tokens: 400 } });
        const { data: stream, response } = await openai.chat.completions.create({ model: "az-gpt", messages: [{ role: "user", content: "hi" }], stream: true }).withResponse();
        const text: string[] = [];
        for await (const chunk of stream) text.push(chunk.choices[0]?.delta.content ?? "");
        expect(text.join("")).toBe("Hello from Azure on Postgres.");
        // (600 x 2.50 + 400 x 1.25 + 100 x 10) / 1e6 USD = $0.003.
        const row = await gateway.app.ctx.store.db
          .selectFrom("ledger")
          .select("cost_nano")
          .where("request_id", "=", response.headers.get("x-request-id")!)
          .executeTakeFirstOrThrow();
        expect(BigInt(row.cost_nano)).toBe(3_000_000n);
        expect(mock.requests[0]).toMatchObject({ path: "/openai/deployments/gpt-4o-prod/chat/completions", apiVersion: DEFAULT_VERSION, key: KEY_1 });
      } finally {
        await gateway.close();
        await mock.close();
      }
    });
  });
}
