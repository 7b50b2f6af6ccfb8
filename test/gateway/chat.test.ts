// POST /v1/chat/completions end to end with the official openai client against mock upstreams.
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicMessage, anthropicStream, chatCompletion, chatStream, json, sleep, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";

describe("chat completions", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }));
    const { raw } = await gateway.createAccount({ balance: "50" });
    client = new OpenAI({ apiKey: raw, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });
  beforeEach(() => {
    mock.requests.length = 0;
  });

  it("passes a buffered request through with the model renamed, and bills it", async () => {
    mock.handler = (_req, res) => json(res, 200, chatCompletion("Hello there", { usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } }));
    const { data, response } = await client.chat.completions.create({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }] }).withResponse();
    expect(data.choices[0]!.message.content).toBe("Hello there");
    expect(data.model).toBe("gpt-mock");
    expect(mock.requests[0]!.body.model).toBe("upstream-gpt");
    expect(mock.requests[0]!.url).toBe("/v1/chat/completions");
    expect(mock.requests[0]!.key).toBe("sk-mock-openai-key-0001");
    expect(response.headers.get("x-request-id")).toMatch(/^req_/);
    expect(response.headers.get("x-gateway-attempts")).toBe("1");
    // 1000 input at $1/M + 500 output at $2/M = 0.001 + 0.001
    expect(response.headers.get("x-gateway-cost-usd")).toBe("0.002");
  });

  it("streams chunk by chunk without showing a usage chunk the client did not ask for", async () => {
    mock.handler = (req, res) => chatStream(req, res, ["Hel", "lo", " wor", "ld"]);
    const stream = await client.chat.completions.create({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], stream: true });
    const parts: string[] = [];
    let sawUsage = false;
    for await (const chunk of stream) {
      parts.push(chunk.choices[0]?.delta?.content ?? "");
      if (chunk.usage) sawUsage = true;
      expect(chunk.model).toBe("gpt-mock");
    }
    expect(parts.join("")).toBe("Hello world");
    expect(sawUsage).toBe(false);
    expect(mock.requests[0]!.body.stream_options).toEqual({ include_usage: true });
  });

  it("shows the usage chunk when the client asked for it", async () => {
    mock.handler = (req, res) => chatStream(req, res, ["a", "b"], { usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } });
    const stream = await client.chat.completions.create({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], stream: true, stream_options: { include_usage: true } });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 2 });
  });

  it("carries tool calls through, buffered and streamed", async () => {
    const toolCalls = [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }];
    mock.handler = (_req, res) => json(res, 200, chatCompletion("", { toolCalls }));
    const tools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
    const done = await client.chat.completions.create({ model: "gpt-mock", messages: [{ role: "user", content: "Weather?" }], tools });
    expect(done.choices[0]!.message.tool_calls).toEqual(toolCalls);
    expect(mock.requests[0]!.body.tools).toEqual(tools);

    mock.handler = (req, res) =>
      chatStream(
        req,
        res,
        [
          { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } }] },
          { tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] },
          { tool_calls: [{ index: 0, function: { arguments: 'ty":"Paris"}' } }] },
        ],
        { finish: "tool_calls" },
      );
    const runner = client.chat.completions.stream({ model: "gpt-mock", messages: [{ role: "user", content: "Weather?" }], tools });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]!.message.tool_calls![0]!.function).toEqual({ name: "get_weather", arguments: '{"city":"Paris"}' });
    expect(final.choices[0]!.finish_reason).toBe("tool_calls");
  });

  it("translates both ways for an Anthropic-native upstream, buffered and streamed", async () => {
    mock.handler = (req, res) =>
      req.body.stream
        ? anthropicStream(res, ["Bon", "jour"], { tool: { id: "toolu_1", name: "lookup", fragments: ['{"q":', '"x"}'] } })
        : json(res, 200, anthropicMessage("Bonjour", { usage: { input_tokens: 20, output_tokens: 4 } }));
    const done = await client.chat.completions.create({
      model: "claude-mock",
      messages: [
        { role: "system", content: "Be brief" },
        { role: "user", content: "Hi" },
      ],
      max_tokens: 100,
    });
    expect(done.choices[0]!.message.content).toBe("Bonjour");
    expect(done.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 4 });
    const sent = mock.requests[0]!;
    expect(sent.url).toBe("/v1/messages");
    expect(sent.headers["x-api-key"]).toBe("sk-ant-mock-key-0001");
    // prompt_caching defaults to auto: the system prompt and the last turn carry breakpoints.
    expect(sent.body).toMatchObject({
      model: "claude-upstream",
      system: [{ type: "text", text: "Be brief", cache_control: { type: "ephemeral" } }],
      messages: [{ role: "user", content: [{ type: "text", text: "Hi", cache_control: { type: "ephemeral" } }] }],
      max_tokens: 100,
    });

    const runner = client.chat.completions.stream({
      model: "claude-mock",
      messages: [{ role: "user", content: "Hi" }],
      tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }],
    });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe("Bonjour");
    expect(final.choices[0]!.message.tool_calls![0]!.function).toEqual({ name: "lookup", arguments: '{"q":"x"}' });
    expect(final.choices[0]!.finish_reason).toBe("tool_calls");
    expect(mock.requests[1]!.body.max_tokens).toBe(1000);
  });

  it("aborts the upstream when the client disconnects mid-stream, and bills what was delivered", async () => {
    const { raw, key } = await gateway.createAccount({ balance: "5" });
    const aborter = new OpenAI({ apiKey: raw, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    mock.handler = (req, res) =>
      chatStream(
        req,
        res,
        Array.from({ length: 200 }, () => "word "),
        { delayMs: 20 },
      );
    const controller = new AbortController();
    const stream = await aborter.chat.completions.create({ model: "gpt-mock", messages: [{ role: "user", content: "Go" }], stream: true }, { signal: controller.signal });
    let received = 0;
    try {
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta?.content) received += 1;
        if (received === 5) controller.abort();
      }
    } catch {
      // the SDK reports the abort
    }
    const deadline = Date.now() + 5000;
    while (!mock.requests[0]?.aborted && Date.now() < deadline) await sleep(20);
    expect(mock.requests[0]!.aborted).toBe(true);
    let rows: Array<{ estimated: bigint; cost_nano: bigint; output_tokens: bigint }> = [];
    while (rows.length === 0 && Date.now() < deadline) {
      rows = await gateway.app.ctx.store.db.selectFrom("ledger").select(["estimated", "cost_nano", "output_tokens"]).where("key_id", "=", key.id).execute();
      await sleep(20);
    }
    expect(rows).toHaveLength(1);
    expect(rows[0]!.estimated).toBe(1n);
    expect(rows[0]!.output_tokens).toBeGreaterThan(0n);
    expect(rows[0]!.cost_nano).toBeGreaterThan(0n);
  });

  it.each([false, true])("cancels the upstream request when the client disconnects before the upstream answers (stream: %s), and charges nothing", async (stream) => {
    const { raw, key, account } = await gateway.createAccount({ balance: "5" });
    const aborter = new OpenAI({ apiKey: raw, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    let answer: NodeJS.Timeout | undefined;
    // The upstream takes its time: the client is gone before any header came back.
    mock.handler = (_req, res) => {
      answer = setTimeout(() => json(res, 200, chatCompletion("too late")), 10_000);
    };
    const controller = new AbortController();
    const call = aborter.chat.completions.create({ model: "gpt-mock", messages: [{ role: "user", content: "Go" }], stream }, { signal: controller.signal });
    const deadline = Date.now() + 5000;
    while (mock.requests.length === 0 && Date.now() < deadline) await sleep(10);
    controller.abort();
    await expect(call).rejects.toThrow();
    while (!mock.requests[0]?.aborted && Date.now() < deadline) await sleep(10);
    clearTimeout(answer);
    expect(mock.requests[0]!.aborted).toBe(true);
    const db = gateway.app.ctx.store.db;
    let holds = 1;
    while (holds > 0 && Date.now() < deadline) {
      holds = (await db.selectFrom("holds").select("id").where("key_id", "=", key.id).execute()).length;
      if (holds > 0) await sleep(10);
    }
    expect(holds).toBe(0);
    expect(await db.selectFrom("ledger").select("id").where("key_id", "=", key.id).execute()).toHaveLength(0);
    const row = await db.selectFrom("accounts").select(["balance_nano", "held_nano"]).where("id", "=", account.id).executeTakeFirstOrThrow();
    expect(row.held_nano).toBe(0n);
    expect(row.balance_nano).toBe(5_000_000_000n);
  });

  it("writes one structured log line per request", async () => {
    mock.handler = (_req, res) => json(res, 200, chatCompletion("ok"));
    const { response } = await client.chat.completions.create({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }] }).withResponse();
    const id = response.headers.get("x-request-id");
    await sleep(50);
    const lines = gateway.logs.filter((l) => l.request_id === id);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ status: 200, model: "gpt-mock", provider: "mockai", input_tokens: 10, output_tokens: 5, attempts: 1 });
    expect(lines[0]!.key).toMatch(/^key_/);
    expect(typeof lines[0]!.cost_usd).toBe("string");
    expect(typeof lines[0]!.latency_ms).toBe("number");
  });
});
