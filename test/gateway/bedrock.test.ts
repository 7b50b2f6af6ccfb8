// The bedrock upstream type end to end: official SDK clients on all three routes, over a mock
// Bedrock Runtime that verifies every SigV4 signature and streams real binary AWS event streams.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { awsError, converseEvents, converseJson, converseStream, eventMessage, exceptionMessage, REQUEST_ID, startMockBedrock, type MockBedrock } from "../support/mock-bedrock.js";
import { startGateway, type TestGateway } from "../support/gateway.js";

const KEY_A = { accessKeyId: "AKIAMOCKKEYA00000001", secretAccessKey: "mockSecretA/CANARYsecretAAAA0123456789abcd", sessionToken: "IQoJmockSessionTokenCANARY+tokenA0123456789==" };
const KEY_B = { accessKeyId: "AKIAMOCKKEYB00000002", secretAccessKey: "mockSecretB/CANARYsecretBBBB0123456789abcd" };
const keyString = (k: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }) => [k.accessKeyId, k.secretAccessKey, k.sessionToken].filter(Boolean).join(":");
const MODEL_ID = "anthropic.claude-3-5-sonnet-20240620-v1:0";
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

function bedrockConfig(url: string, keys: string[] = [keyString(KEY_A), keyString(KEY_B)]): string {
  return `
providers:
  aws:
    type: bedrock
    base_url: "${url}"
    region: us-east-1
    keys: ${JSON.stringify(keys)}
models:
  - id: claude-bedrock
    kind: chat
    provider: aws
    upstream_model: "${MODEL_ID}"
    max_output_tokens: 8192
    default_output_tokens: 1000
    pricing: { input_per_mtok: "3.00", cached_input_per_mtok: "0.30", output_per_mtok: "15.00" }
`;
}

const weatherTool = {
  type: "function" as const,
  function: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};

describe("bedrock upstream (Converse, SigV4, AWS event stream)", () => {
  let mock: MockBedrock;
  let gateway: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let keyId: string;

  beforeAll(async () => {
    mock = await startMockBedrock([KEY_A, KEY_B]);
    gateway = await startGateway(bedrockConfig(mock.url));
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
    mock.refused.length = 0;
  });

  async function costOf(requestId: string): Promise<bigint> {
    const row = await gateway.app.ctx.store.db.selectFrom("ledger").select(["cost_nano"]).where("key_id", "=", keyId).where("request_id", "=", requestId).executeTakeFirstOrThrow();
    return row.cost_nano;
  }

  it("chat buffered with an image and tools: signed Converse request, tool_calls back, usage billed exactly", async () => {
    mock.handler = (_req, res) =>
      converseJson(res, {
        output: { message: { role: "assistant", content: [{ text: "Checking." }, { toolUse: { toolUseId: "tooluse_abc123", name: "get_weather", input: { city: "Oslo" } } }] } },
        stopReason: "tool_use",
        usage: { inputTokens: 1200, outputTokens: 80, totalTokens: 5380, cacheReadInputTokens: 4000, cacheWriteInputTokens: 100 },
        metrics: { latencyMs: 420 },
      });
    const { data, response } = await openai.chat.completions
      .create({
        model: "claude-bedrock",
        max_tokens: 300,
        temperature: 0.5,
        stop: ["END"],
        tools: [weatherTool],
        tool_choice: "required",
        messages: [
          { role: "system", content: "You are terse." },
          {
            role: "user",
            content: [
              { type: "text", text: "Weather where this was taken?" },
              { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
            ],
          },
        ],
      })
      .withResponse();
    expect(mock.refused).toEqual([]);
    const sent = mock.requests[0]!;
    expect(sent.operation).toBe("converse");
    expect(sent.modelId).toBe(MODEL_ID);
    expect(sent.path).toBe("/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse");
    expect(sent.region).toBe("us-east-1");
    expect(sent.headers["x-amz-security-token"]).toBe(KEY_A.sessionToken);
    expect(sent.body).toEqual({
      system: [{ text: "You are terse." }],
      messages: [{ role: "user", content: [{ text: "Weather where this was taken?" }, { image: { format: "png", source: { bytes: PNG } } }] }],
      inferenceConfig: { maxTokens: 300, temperature: 0.5, stopSequences: ["END"] },
      toolConfig: {
        tools: [{ toolSpec: { name: "get_weather", description: "Weather for a city", inputSchema: { json: weatherTool.function.parameters } } }],
        toolChoice: { any: {} },
      },
    });
    const choice = data.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBe("Checking.");
    expect(choice.message.tool_calls).toEqual([{ id: "tooluse_abc123", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }]);
    expect(data.usage).toMatchObject({ prompt_tokens: 5300, completion_tokens: 80, prompt_tokens_details: { cached_tokens: 4000 } });
    // (5300 - 4000) * $3 + 4000 * $0.30 + 80 * $15 per million tokens = 0.0039 + 0.0012 + 0.0012 = $0.0063.
    expect(await costOf(response.headers.get("x-request-id")!)).toBe(6_300_000n);
    expect(response.headers.get("x-gateway-cost-usd")).toBe("0.0063");
  });

  it("chat streamed: text and tool input deltas from a binary event stream split anywhere, usage billed", async () => {
    mock.handler = (_req, res) =>
      converseStream(
        res,
        converseEvents({
          text: ["Let me ", "check."],
          tools: [{ id: "tooluse_s1", name: "get_weather", input: ['{"ci', 'ty": "Rome"}'] }],
          stopReason: "tool_use",
          usage: { inputTokens: 21, outputTokens: 9, totalTokens: 30 },
        }),
      );
    const stream = openai.chat.completions.stream({
      model: "claude-bedrock",
      tools: [weatherTool],
      messages: [{ role: "user", content: "Rome?" }],
      stream_options: { include_usage: true },
    });
    const final = await stream.finalChatCompletion();
    expect(mock.requests[0]!.operation).toBe("converse-stream");
    expect(mock.requests[0]!.body.inferenceConfig).toEqual({ maxTokens: 1000 });
    const message = final.choices[0]!.message;
    expect(message.content).toBe("Let me check.");
    expect(message.tool_calls).toEqual([{ id: "tooluse_s1", type: "function", function: { name: "get_weather", arguments: '{"city": "Rome"}' } }]);
    expect(final.choices[0]!.finish_reason).toBe("tool_calls");
    expect(final.usage).toMatchObject({ prompt_tokens: 21, completion_tokens: 9 });
    const row = await gateway.app.ctx.store.db
      .selectFrom("ledger")
      .select(["cost_nano", "input_tokens", "output_tokens", "estimated"])
      .where("key_id", "=", keyId)
      .orderBy("id", "desc")
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ input_tokens: 21n, output_tokens: 9n, estimated: 0n });
    // 21 * $3 + 9 * $15 per million = $0.000198, also in-band in the usage chunk.
    expect(row.cost_nano).toBe(198_000n);
    expect(final.usage).toMatchObject({ cost: "0.000198" });
  });

  it("messages.create and messages.stream (Anthropic SDK), bridged over Converse", async () => {
    mock.handler = (req, res) =>
      req.operation === "converse"
        ? converseJson(res, {
            output: { message: { role: "assistant", content: [{ toolUse: { toolUseId: "tooluse_m1", name: "get_weather", input: { city: "Oslo" } } }] } },
            stopReason: "tool_use",
            usage: { inputTokens: 30, outputTokens: 8 },
          })
        : converseStream(res, converseEvents({ text: ["Hi", " there"], stopReason: "end_turn", usage: { inputTokens: 12, outputTokens: 3 } }));
    const tool = { name: "get_weather", description: "Weather for a city", input_schema: { type: "object" as const, properties: { city: { type: "string" } } } };
    const message = await anthropic.messages.create({
      model: "claude-bedrock",
      max_tokens: 200,
      system: "Be terse.",
      tools: [tool],
      messages: [{ role: "user", content: "Oslo?" }],
    });
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toEqual([{ type: "tool_use", id: "tooluse_m1", name: "get_weather", input: { city: "Oslo" } }]);
    expect(message.usage).toMatchObject({ input_tokens: 30, output_tokens: 8 });
    expect(mock.requests[0]!.body.system).toEqual([{ text: "Be terse." }]);

    const final = await anthropic.messages.stream({ model: "claude-bedrock", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] }).finalMessage();
    expect(final.content).toEqual([{ type: "text", text: "Hi there" }]);
    expect(final.stop_reason).toBe("end_turn");
    expect(final.usage).toMatchObject({ input_tokens: 12, output_tokens: 3 });
  });

  it("responses.create with a tool round trip and responses.stream (OpenAI SDK), bridged over Converse", async () => {
    mock.handler = (req, res) =>
      req.operation === "converse"
        ? converseJson(res, {
            output: { message: { role: "assistant", content: [{ text: "It is sunny." }] } },
            stopReason: "end_turn",
            usage: { inputTokens: 40, outputTokens: 5 },
          })
        : converseStream(res, converseEvents({ text: ["Str", "eamed"], stopReason: "max_tokens", usage: { inputTokens: 7, outputTokens: 2 } }));
    const response = await openai.responses.create({
      model: "claude-bedrock",
      store: false,
      tools: [{ type: "function", name: "get_weather", parameters: weatherTool.function.parameters, strict: false }],
      input: [
        { role: "user", content: "Weather in Oslo?" },
        { type: "function_call", call_id: "tooluse_r1", name: "get_weather", arguments: '{"city":"Oslo"}' },
        { type: "function_call_output", call_id: "tooluse_r1", output: "sunny" },
      ],
    });
    expect(response.output_text).toBe("It is sunny.");
    expect(mock.requests[0]!.body.messages).toEqual([
      { role: "user", content: [{ text: "Weather in Oslo?" }] },
      { role: "assistant", content: [{ toolUse: { toolUseId: "tooluse_r1", name: "get_weather", input: { city: "Oslo" } } }] },
      { role: "user", content: [{ toolResult: { toolUseId: "tooluse_r1", content: [{ text: "sunny" }] } }] },
    ]);
    const final = await openai.responses.stream({ model: "claude-bedrock", input: "Say streamed", store: false }).finalResponse();
    expect(final.output_text).toBe("Streamed");
    expect(final.status).toBe("incomplete");
  });

  it("fails over to the next key on a 429 (ThrottlingException); each attempt signed with its own key", async () => {
    mock.handler = (req, res) =>
      req.accessKeyId === KEY_A.accessKeyId
        ? awsError(res, 429, "ThrottlingException", "Too many requests, please wait before trying again.")
        : converseJson(res, { output: { message: { role: "assistant", content: [{ text: "second key" }] } }, stopReason: "end_turn", usage: { inputTokens: 5, outputTokens: 2 } });
    const completion = await openai.chat.completions.create({ model: "claude-bedrock", messages: [{ role: "user", content: "x" }] });
    expect(completion.choices[0]!.message.content).toBe("second key");
    expect(mock.requests.map((r) => r.accessKeyId)).toEqual([KEY_A.accessKeyId, KEY_B.accessKeyId]);
    expect(mock.requests[1]!.headers["x-amz-security-token"]).toBeUndefined();
    expect(mock.refused).toEqual([]);
  });

  it("an exception message mid-stream becomes an in-band stream error; the text before it is delivered", async () => {
    mock.handler = (_req, res) =>
      converseStream(res, [
        ...converseEvents({ text: ["partial"], stopReason: "end_turn", usage: { inputTokens: 1, outputTokens: 1 } }).slice(0, 3),
        exceptionMessage("throttlingException", `slow down ${REQUEST_ID}`),
      ]);
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${openai.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "claude-bedrock", stream: true, messages: [{ role: "user", content: "x" }] }),
    });
    const text = await response.text();
    expect(text).toContain('"content":"partial"');
    expect(text).toMatch(/"error":\{"message":"The upstream stream failed\."/);
    expect(text).not.toContain(REQUEST_ID);
  });

  it("reasoning on a Claude model: thinking sent as additionalModelRequestFields, reasoningContent back as thinking (Messages) and reasoning_content (Chat stream)", async () => {
    mock.handler = (_req, res) =>
      converseJson(res, {
        output: {
          message: {
            role: "assistant",
            content: [{ reasoningContent: { reasoningText: { text: "Plan the answer.", signature: "c2lnLWJlZHJvY2s=" } } }, { text: "Answer." }],
          },
        },
        stopReason: "end_turn",
        usage: { inputTokens: 50, outputTokens: 40, totalTokens: 90 },
      });
    const message = await anthropic.messages.create({
      model: "claude-bedrock",
      max_tokens: 8000,
      thinking: { type: "enabled", budget_tokens: 4096 },
      messages: [{ role: "user", content: "Think first." }],
    });
    // budget 4,096 is the low effort; its table budget is capped at half the client's limit.
    expect(mock.requests[0]!.body.additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 4000 } });
    expect(message.content).toEqual([
      { type: "thinking", thinking: "Plan the answer.", signature: "c2lnLWJlZHJvY2s=" },
      { type: "text", text: "Answer." },
    ]);

    mock.handler = (_req, res) =>
      converseStream(res, [
        eventMessage("messageStart", { role: "assistant" }),
        eventMessage("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { text: "Plan " } } }),
        eventMessage("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { text: "it." } } }),
        eventMessage("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { signature: "c2lnLXN0cmVhbQ==" } } }),
        eventMessage("contentBlockStop", { contentBlockIndex: 0 }),
        ...converseEvents({ text: ["Answer."], stopReason: "end_turn", usage: { inputTokens: 50, outputTokens: 40, totalTokens: 90 } }).slice(1),
      ]);
    const stream = await openai.chat.completions.create({ model: "claude-bedrock", stream: true, reasoning_effort: "low", messages: [{ role: "user", content: "Again." }] });
    let reasoning = "";
    const blocks: unknown[] = [];
    for await (const chunk of stream) {
      const delta: OpenAI.Chat.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string; thinking_blocks?: unknown[] } = chunk.choices[0]!.delta;
      reasoning += delta.reasoning_content ?? "";
      blocks.push(...(delta.thinking_blocks ?? []));
    }
    expect(reasoning).toBe("Plan it.");
    expect(blocks).toEqual([{ type: "thinking", thinking: "Plan it.", signature: "c2lnLXN0cmVhbQ==" }]);
    // No client limit: the budget is added to the model's default output (1,000 + 4,096, within 8,192).
    expect(mock.requests[1]!.body.additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 4096 } });
    expect(mock.requests[1]!.body.inferenceConfig).toEqual({ maxTokens: 5096 });
  });
});

describe("bedrock upstream: signatures, scrubbing, PostgreSQL", () => {
  let mock: MockBedrock;
  beforeAll(async () => {
    mock = await startMockBedrock([KEY_A, KEY_B]);
  });
  afterAll(async () => {
    await mock?.close();
  });

  async function post(gateway: TestGateway, raw: string, body: object) {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  it("a key with a wrong secret is refused by the mock's signature check (403), and the client sees no part of the key", async () => {
    const wrong = `${KEY_B.accessKeyId}:mockSecretB/CANARYwrongSecret0123456789abcd`;
    const gateway = await startGateway(bedrockConfig(mock.url, [wrong]));
    try {
      mock.refused.length = 0;
      mock.handler = (_req, res) => converseJson(res, { output: { message: { role: "assistant", content: [{ text: "unreachable" }] } }, stopReason: "end_turn" });
      const { raw } = await gateway.createAccount();
      const result = await post(gateway, raw, { model: "claude-bedrock", messages: [{ role: "user", content: "x" }] });
      expect(mock.refused).toEqual(["InvalidSignatureException: The request signature we calculated does not match the signature you provided."]);
      expect(result.status).toBeGreaterThanOrEqual(400);
      for (const canary of [KEY_B.accessKeyId, "CANARYwrongSecret", mock.host, REQUEST_ID]) expect(result.text).not.toContain(canary);
      expect(result.headers.get("x-amzn-requestid")).toBeNull();
    } finally {
      await gateway.close();
    }
  });

  it("keys, signatures, session tokens, hosts and request ids echoed in bodies, streams and headers never reach the client", async () => {
    const gateway = await startGateway(bedrockConfig(mock.url));
    try {
      const { raw } = await gateway.createAccount();
      const leak = (req: { headers: Record<string, unknown> }) =>
        `echo ${String(req.headers.authorization)} token ${String(req.headers["x-amz-security-token"])} secret ${KEY_A.secretAccessKey} host ${mock.url} id ${REQUEST_ID}`;
      const traceHeaders = { "x-amzn-trace-id": "Root=1-67891233-abcdef012345678912345678", "x-amzn-requestid": REQUEST_ID };
      const canaries = [KEY_A.accessKeyId, KEY_A.secretAccessKey, KEY_A.sessionToken, "CANARY", mock.host, REQUEST_ID, "67891233-abcdef012345678912345678"];
      const expectClean = (result: { text: string; headers: Headers }) => {
        for (const canary of canaries) expect(result.text).not.toContain(canary);
        expect(result.text).not.toMatch(/Signature=[0-9a-f]{64}/);
        for (const name of ["x-amzn-requestid", "x-amzn-trace-id", "x-amzn-errortype"]) expect(result.headers.get(name)).toBeNull();
      };

      mock.handler = (req, res) => {
        res.setHeader("x-amzn-trace-id", traceHeaders["x-amzn-trace-id"]);
        if (req.operation === "converse-stream")
          return converseStream(
            res,
            converseEvents({ text: [leak(req), ` ${traceHeaders["x-amzn-trace-id"]}`], stopReason: "end_turn", usage: { inputTokens: 3, outputTokens: 4 } }),
          );
        return converseJson(res, {
          output: { message: { role: "assistant", content: [{ text: `${leak(req)} ${traceHeaders["x-amzn-trace-id"]}` }] } },
          stopReason: "end_turn",
          usage: { inputTokens: 3, outputTokens: 4 },
        });
      };
      const buffered = await post(gateway, raw, { model: "claude-bedrock", messages: [{ role: "user", content: "x" }] });
      expect(buffered.status).toBe(200);
      expect(buffered.text).toContain("echo AWS4-HMAC-SHA256");
      expectClean(buffered);
      const streamed = await post(gateway, raw, { model: "claude-bedrock", stream: true, messages: [{ role: "user", content: "x" }] });
      expect(streamed.text).toContain("echo AWS4-HMAC-SHA256");
      expectClean(streamed);

      mock.handler = (req, res) => awsError(res, 400, "ValidationException", leak(req), traceHeaders);
      const error = await post(gateway, raw, { model: "claude-bedrock", messages: [{ role: "user", content: "x" }] });
      expect(error.status).toBeGreaterThanOrEqual(400);
      expectClean(error);
    } finally {
      await gateway.close();
    }
  });

  it("bills a buffered answer exactly on PostgreSQL", async () => {
    const gateway = await startGateway(bedrockConfig(mock.url), { kind: "postgres" });
    try {
      const { raw, key } = await gateway.createAccount();
      mock.handler = (_req, res) =>
        converseJson(res, { output: { message: { role: "assistant", content: [{ text: "pg" }] } }, stopReason: "end_turn", usage: { inputTokens: 1000, outputTokens: 100 } });
      const result = await post(gateway, raw, { model: "claude-bedrock", messages: [{ role: "user", content: "x" }] });
      expect(result.status).toBe(200);
      const row = await gateway.app.ctx.store.db.selectFrom("ledger").select(["cost_nano", "input_tokens", "output_tokens"]).where("key_id", "=", key.id).executeTakeFirstOrThrow();
      // 1000 * $3 + 100 * $15 per million = $0.0045.
      expect(row).toMatchObject({ cost_nano: 4_500_000n, input_tokens: 1000n, output_tokens: 100n });
    } finally {
      await gateway.close();
    }
  });
});
