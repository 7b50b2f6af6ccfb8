// /v1/messages and /v1/responses over any provider, proven with the official SDKs' own helpers.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { estimateMessagesPromptTokens } from "../../src/formats/messages/messages-over-chat.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicMessage, anthropicStream, chatCompletion, chatStream, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";

const weatherTool = {
  name: "get_weather",
  description: "Weather for a city",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] },
};

describe("format bridges", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let anthropic: Anthropic;
  let openai: OpenAI;
  let keyId: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }));
    const { raw, key } = await gateway.createAccount({ balance: "50" });
    keyId = key.id;
    anthropic = new Anthropic({ apiKey: raw, baseURL: gateway.url, maxRetries: 0 });
    openai = new OpenAI({ apiKey: raw, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });
  beforeEach(() => {
    mock.requests.length = 0;
  });

  describe("/v1/messages on a chat-only upstream", () => {
    it("messages.create with tools", async () => {
      mock.handler = (_req, res) =>
        json(
          res,
          200,
          chatCompletion("", {
            toolCalls: [{ id: "call_9", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
            usage: { prompt_tokens: 30, completion_tokens: 8, total_tokens: 38 },
          }),
        );
      const message = await anthropic.messages.create({
        model: "gpt-mock",
        max_tokens: 300,
        system: "You are terse.",
        tools: [weatherTool],
        messages: [{ role: "user", content: "Weather in Oslo?" }],
      });
      expect(message.stop_reason).toBe("tool_use");
      expect(message.content).toEqual([{ type: "tool_use", id: "call_9", name: "get_weather", input: { city: "Oslo" } }]);
      expect(message.usage).toMatchObject({ input_tokens: 30, output_tokens: 8 });
      const sent = mock.requests[0]!.body;
      expect(sent.messages[0]).toEqual({ role: "system", content: "You are terse." });
      expect(sent.tools[0].function.name).toBe("get_weather");
      expect(sent.model).toBe("upstream-gpt");
    });

    it("messages.stream(...).finalMessage() assembles text and tool input", async () => {
      mock.handler = (req, res) =>
        chatStream(
          req,
          res,
          [
            "Let me ",
            "check.",
            { tool_calls: [{ index: 0, id: "call_5", type: "function", function: { name: "get_weather", arguments: "" } }] },
            { tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] },
            { tool_calls: [{ index: 0, function: { arguments: 'ty": "Rome"}' } }] },
          ],
          { finish: "tool_calls", usage: { prompt_tokens: 21, completion_tokens: 9, total_tokens: 30 } },
        );
      const final = await anthropic.messages.stream({ model: "gpt-mock", max_tokens: 300, tools: [weatherTool], messages: [{ role: "user", content: "Rome?" }] }).finalMessage();
      expect(final.content).toEqual([
        { type: "text", text: "Let me check." },
        { type: "tool_use", id: "call_5", name: "get_weather", input: { city: "Rome" } },
      ]);
      expect(final.stop_reason).toBe("tool_use");
      expect(final.usage.output_tokens).toBe(9);
    });

    it("a streamed message_start reports the gateway's input estimate, message_delta the upstream's count", async () => {
      mock.handler = (req, res) => chatStream(req, res, ["Hi"], { usage: { prompt_tokens: 21, completion_tokens: 2, total_tokens: 23 } });
      const params = { model: "gpt-mock", max_tokens: 300, messages: [{ role: "user" as const, content: "What is the weather in Rome today?" }] };
      const events: Array<{ type: string; message?: { usage: { input_tokens: number } }; usage?: { input_tokens?: number | null } }> = [];
      for await (const event of await anthropic.messages.create({ ...params, stream: true })) events.push(event);
      const start = events.find((e) => e.type === "message_start")!;
      expect(start.message!.usage.input_tokens).toBe(estimateMessagesPromptTokens(params));
      expect(start.message!.usage.input_tokens).toBeGreaterThan(0);
      expect(events.find((e) => e.type === "message_delta")!.usage!.input_tokens).toBe(21);
    });

    it("accepts Claude Code's shape: ?beta=true, tools: [], a system turn, unknown fields", async () => {
      mock.handler = (_req, res) => json(res, 200, chatCompletion("ok"));
      const response = await fetch(`${gateway.url}/v1/messages?beta=true`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-api-key": anthropic.apiKey as string,
          "anthropic-version": "2023-06-01",
          "anthropic-beta": "context-management-2025-06-27,interleaved-thinking-2025-05-14",
        },
        body: JSON.stringify({
          model: "gpt-mock",
          max_tokens: 4096, // Claude Code's max_tokens (32000 by default) must fit the model's max_output_tokens (gpt-mock: 4096)
          tools: [],
          thinking: { type: "adaptive" },
          context_management: { edits: [] },
          output_config: { effort: "high" },
          messages: [
            { role: "system", content: "sys" },
            { role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] },
          ],
        }),
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { content: Array<{ text: string }> };
      expect(body.content[0]!.text).toBe("ok");
      expect(mock.requests[0]!.body.tools).toBeUndefined();
    });
  });

  describe("/v1/messages on an Anthropic-native upstream", () => {
    it("passes through with the model renamed and beta headers forwarded", async () => {
      mock.handler = (req, res) => (req.body.stream ? anthropicStream(res, ["Hi", " there"]) : json(res, 200, anthropicMessage("Hello")));
      const message = await anthropic.messages.create(
        { model: "claude-mock", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] },
        { headers: { "anthropic-beta": "interleaved-thinking-2025-05-14" } },
      );
      expect(message.content).toEqual([{ type: "text", text: "Hello" }]);
      expect(message.model).toBe("claude-mock");
      expect(mock.requests[0]!.body.model).toBe("claude-upstream");
      expect(mock.requests[0]!.headers["anthropic-beta"]).toBe("interleaved-thinking-2025-05-14");
      const final = await anthropic.messages.stream({ model: "claude-mock", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] }).finalMessage();
      expect(final.content).toHaveLength(1);
      expect(final.content[0]).toMatchObject({ type: "text", text: "Hi there" });
      expect(final.model).toBe("claude-mock");
    });

    it("renders errors in the Anthropic envelope", async () => {
      const error = await anthropic.messages.create({ model: "nope", max_tokens: 10, messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.NotFoundError);
      const apiError = error as InstanceType<typeof Anthropic.NotFoundError>;
      expect(apiError.error).toMatchObject({ type: "error", error: { type: "not_found" } });
      expect(apiError.headers?.get("x-request-id")).toMatch(/^req_/);
    });

    it("counts tokens with the upstream's own counter (test/gateway/claude-code-protocol.test.ts has the rest)", async () => {
      mock.handler = (req, res) => json(res, req.url === "/v1/messages/count_tokens" ? 200 : 500, { input_tokens: 17 });
      const counted = await anthropic.messages.countTokens({ model: "claude-mock", messages: [{ role: "user", content: "Hello world, how are you today?" }] });
      expect(counted.input_tokens).toBe(17);
    });
  });

  describe("/v1/responses on a chat-only upstream", () => {
    it("responses.create with a function tool round trip", async () => {
      mock.handler = (_req, res) => json(res, 200, chatCompletion("", { toolCalls: [{ id: "call_7", type: "function", function: { name: "lookup", arguments: '{"q":"a"}' } }] }));
      const response = await openai.responses.create({
        model: "gpt-mock",
        instructions: "Be helpful",
        input: "Find a",
        tools: [{ type: "function", name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } }, strict: false }],
      });
      const call = response.output.find((item) => item.type === "function_call");
      expect(call).toMatchObject({ type: "function_call", call_id: "call_7", name: "lookup", arguments: '{"q":"a"}' });
      expect(mock.requests[0]!.body.messages[0]).toEqual({ role: "system", content: "Be helpful" });
      expect(mock.requests[0]!.body.tools[0]).toMatchObject({ type: "function", function: { name: "lookup" } });
    });

    it("responses.stream assembles the final response", async () => {
      mock.handler = (req, res) => chatStream(req, res, ["Str", "eam", "ed"], { usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 } });
      const stream = openai.responses.stream({ model: "gpt-mock", input: "Say streamed" });
      const types: string[] = [];
      stream.on("event", (event) => types.push(event.type));
      const final = await stream.finalResponse();
      expect(final.output_text).toBe("Streamed");
      expect(final.status).toBe("completed");
      expect(final.usage).toMatchObject({ input_tokens: 11, output_tokens: 3 });
      expect(types[0]).toBe("response.created");
      expect(types).toContain("response.output_item.done");
      expect(types.at(-1)).toBe("response.completed");
    });

    it("continues a conversation with previous_response_id, and GET returns the stored response", async () => {
      mock.handler = (_req, res) => json(res, 200, chatCompletion("My name is Mock."));
      const first = await openai.responses.create({ model: "gpt-mock", input: "What is your name?" });
      mock.handler = (_req, res) => json(res, 200, chatCompletion("I said Mock."));
      const second = await openai.responses.create({ model: "gpt-mock", input: "Repeat it", previous_response_id: first.id });
      expect(second.output_text).toBe("I said Mock.");
      const history = mock.requests[1]!.body.messages;
      expect(history).toEqual([
        { role: "user", content: "What is your name?" },
        { role: "assistant", content: "My name is Mock." },
        { role: "user", content: "Repeat it" },
      ]);
      const fetched = await openai.responses.retrieve(first.id);
      expect(fetched.id).toBe(first.id);
      expect(fetched.output_text).toBe("My name is Mock.");
      const missing = await openai.responses.create({ model: "gpt-mock", input: "x", previous_response_id: "resp_unknown" }).catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(OpenAI.BadRequestError);
    });

    it("runs a Responses client on an Anthropic-native upstream through both translations", async () => {
      mock.handler = (_req, res) => anthropicStream(res, ["Ciao"]);
      const final = await openai.responses.stream({ model: "claude-mock", input: "Greet me" }).finalResponse();
      expect(final.output_text).toBe("Ciao");
      expect(mock.requests[0]!.url).toBe("/v1/messages");
    });
  });

  it("records the same usage and cost whichever route carried the same upstream call", async () => {
    const usage = { prompt_tokens: 1234, completion_tokens: 321, total_tokens: 1555 };
    mock.handler = (_req, res) => json(res, 200, chatCompletion("same", { usage }));
    const chat = await openai.chat.completions.create({ model: "gpt-mock", messages: [{ role: "user", content: "x" }] }).withResponse();
    const messages = await anthropic.messages.create({ model: "gpt-mock", max_tokens: 50, messages: [{ role: "user", content: "x" }] }).withResponse();
    const responses = await openai.responses.create({ model: "gpt-mock", input: "x", store: false }).withResponse();
    const ids = [chat, messages, responses].map((r) => r.response.headers.get("x-request-id")!);
    const rows = await gateway.app.ctx.store.db
      .selectFrom("ledger")
      .select(["request_id", "route", "input_tokens", "output_tokens", "cost_nano"])
      .where("key_id", "=", keyId)
      .where("request_id", "in", ids)
      .execute();
    expect(rows).toHaveLength(3);
    expect(new Set(rows.map((r) => r.route))).toEqual(new Set(["chat", "messages", "responses"]));
    for (const row of rows) {
      expect(row.input_tokens).toBe(1234n);
      expect(row.output_tokens).toBe(321n);
      expect(row.cost_nano).toBe(rows[0]!.cost_nano);
    }
  });
});
