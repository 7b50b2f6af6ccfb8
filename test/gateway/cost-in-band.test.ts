// The charged cost in-band: usage.cost (response.usage.cost in a Responses stream event) in the final
// frame of every stream and in every buffered body, read through the official SDKs, on pass-through
// and bridged routes; it equals x-gateway-cost-usd and the ledger row's cost.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { formatUsd } from "../../src/core/money.js";
import { anthropicMessage, anthropicStream, chatCompletion, chatStream, json, startMockUpstream, type MockUpstream, type RecordedRequest } from "../support/mock-upstream.js";
import { startGateway, type TestGateway } from "../support/gateway.js";

const CHAT_USAGE = { prompt_tokens: 1000, completion_tokens: 200, total_tokens: 1200, prompt_tokens_details: { cached_tokens: 400 } };
const RESPONSES_USAGE = { input_tokens: 900, output_tokens: 150, total_tokens: 1050, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 50 } };

function config(url: string): string {
  return `
providers:
  mockai:
    type: openai
    base_url: "${url}/v1"
    keys: ["sk-mock-openai-key-0001"]
    apis: [chat]
  mockresponses:
    type: openai
    base_url: "${url}/v1"
    keys: ["sk-mock-openai-key-0002"]
    apis: [chat, responses]
  mockanthropic:
    type: anthropic
    base_url: "${url}"
    keys: ["sk-ant-mock-key-0001"]
models:
  - id: gpt-mock
    kind: chat
    provider: mockai
    upstream_model: upstream-gpt
    max_output_tokens: 4096
    pricing: { input_per_mtok: "1.00", cached_input_per_mtok: "0.50", output_per_mtok: "2.00" }
  - id: resp-mock
    kind: chat
    provider: mockresponses
    upstream_model: upstream-resp
    max_output_tokens: 4096
    pricing: { input_per_mtok: "1.25", output_per_mtok: "10.00" }
  - id: claude-mock
    kind: chat
    provider: mockanthropic
    upstream_model: claude-upstream
    max_output_tokens: 8192
    pricing: { input_per_mtok: "3.00", cached_input_per_mtok: "0.30", output_per_mtok: "15.00" }
tiers:
  standard: { models: ["*"] }
server:
  default_tier: standard
`;
}

function responsesObject(status: "in_progress" | "completed", usage: object | null) {
  return {
    id: "resp_up_1",
    object: "response",
    created_at: 1_700_000_000,
    model: "upstream-resp",
    status,
    output:
      status === "completed"
        ? [{ type: "message", id: "msg_up_1", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Hello", annotations: [] }] }]
        : [],
    usage,
  };
}

function responsesStream(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  let sequence = 0;
  const send = (data: Record<string, unknown>) => res.write(`event: ${String(data.type)}\ndata: ${JSON.stringify({ ...data, sequence_number: sequence++ })}\n\n`);
  send({ type: "response.created", response: responsesObject("in_progress", null) });
  send({ type: "response.output_item.added", output_index: 0, item: { type: "message", id: "msg_up_1", status: "in_progress", role: "assistant", content: [] } });
  send({ type: "response.content_part.added", item_id: "msg_up_1", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
  for (const delta of ["Hel", "lo"]) send({ type: "response.output_text.delta", item_id: "msg_up_1", output_index: 0, content_index: 0, delta });
  send({ type: "response.output_text.done", item_id: "msg_up_1", output_index: 0, content_index: 0, text: "Hello" });
  send({ type: "response.completed", response: responsesObject("completed", RESPONSES_USAGE) });
  res.end();
}

/** One upstream for all three APIs; `withoutUsage` makes the Chat upstream ignore include_usage (the gateway then estimates). */
function upstream(options: { withoutUsage?: boolean } = {}) {
  return (req: RecordedRequest, res: ServerResponse) => {
    const stream = req.body?.stream === true;
    if (req.url.startsWith("/v1/chat/completions")) {
      if (!stream) return json(res, 200, chatCompletion("Hello", { usage: CHAT_USAGE }));
      const body = options.withoutUsage ? { ...req.body, stream_options: undefined } : req.body;
      return chatStream({ ...req, body }, res, ["Hel", "lo"], { usage: CHAT_USAGE });
    }
    if (req.url.startsWith("/v1/responses")) return stream ? responsesStream(res) : json(res, 200, responsesObject("completed", RESPONSES_USAGE));
    if (req.url.startsWith("/v1/messages")) {
      const usage = { input_tokens: 700, output_tokens: 90, cache_read_input_tokens: 300, cache_creation_input_tokens: 0 };
      return stream ? anthropicStream(res, ["Hel", "lo"], { usage: { input: 700, output: 90 } }) : json(res, 200, anthropicMessage("Hello", { usage }));
    }
    json(res, 404, { error: { message: "no such path" } });
  };
}

describe("cost in-band", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(config(mock.url));
    const { raw } = await gateway.createAccount({ balance: "50" });
    openai = new OpenAI({ apiKey: raw, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: raw, baseURL: gateway.url, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });
  beforeEach(() => {
    mock.handler = upstream();
  });

  /** The ledger row's cost of the request the response names, as formatUsd text; and whether it was estimated. */
  async function ledgerCost(headers: Headers): Promise<{ cost: string; estimated: boolean }> {
    const id = headers.get("x-request-id")!;
    const row = await gateway.app.ctx.store.db.selectFrom("ledger").selectAll().where("request_id", "=", id).executeTakeFirstOrThrow();
    return { cost: formatUsd(row.cost_nano), estimated: row.estimated === 1n };
  }

  describe("Chat Completions (openai SDK)", () => {
    it.each([
      ["passed through", "gpt-mock", "0.0012"], // 600 x 1.00/M + 400 x 0.50/M + 200 x 2.00/M
      ["over an Anthropic upstream", "claude-mock", "0.00354"], // 700 x 3/M + 300 cache reads x 0.30/M + 90 x 15/M
    ])("buffered, %s: usage.cost equals the header and the ledger", async (_name, model, expected) => {
      const { data, response } = await openai.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }] }).withResponse();
      const cost = (data.usage as unknown as { cost: string }).cost;
      expect(cost).toBe(expected);
      expect(response.headers.get("x-gateway-cost-usd")).toBe(cost);
      expect((await ledgerCost(response.headers)).cost).toBe(cost);
    });

    it.each([
      ["passed through", "gpt-mock", "0.0012"],
      ["over an Anthropic upstream", "claude-mock", "0.00345"], // 700 x 3/M + 90 x 15/M (the mock stream reports no cache reads)
    ])("streamed with include_usage, %s: the usage chunk before [DONE] carries the cost", async (_name, model, expected) => {
      const { data: stream, response } = await openai.chat.completions
        .create({ model, messages: [{ role: "user", content: "hi" }], stream: true, stream_options: { include_usage: true } })
        .withResponse();
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
      expect(text).toBe("Hello");
      const last = chunks.at(-1)!;
      expect(last.choices).toEqual([]);
      expect(last.usage).toMatchObject({ cost: expected });
      expect(chunks.slice(0, -1).every((c) => c.usage === null || c.usage === undefined)).toBe(true);
      expect((await ledgerCost(response.headers)).cost).toBe(expected);
    });

    it("streamed without include_usage: no usage chunk is added (clients that index choices[0] keep working)", async () => {
      const stream = await openai.chat.completions.create({ model: "gpt-mock", messages: [{ role: "user", content: "hi" }], stream: true });
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks.length).toBeGreaterThan(0);
      expect(chunks.every((c) => c.choices.length > 0 && !c.usage)).toBe(true);
    });
  });

  describe("Responses (openai SDK)", () => {
    it.each([
      ["passed through", "resp-mock", "0.002625"], // 900 x 1.25/M + 150 x 10/M
      ["over a chat-only upstream", "gpt-mock", "0.0012"],
    ])("buffered, %s: usage.cost equals the header and the ledger", async (_name, model, expected) => {
      const { data, response } = await openai.responses.create({ model, input: "hi", store: false }).withResponse();
      expect(data.output_text).toBe("Hello");
      const cost = (data.usage as unknown as { cost: string }).cost;
      expect(cost).toBe(expected);
      expect(response.headers.get("x-gateway-cost-usd")).toBe(cost);
      expect((await ledgerCost(response.headers)).cost).toBe(cost);
    });

    it.each([
      ["passed through", "resp-mock", "0.002625"],
      ["over a chat-only upstream", "gpt-mock", "0.0012"],
    ])("streamed, %s: response.completed carries response.usage.cost", async (_name, model, expected) => {
      const { data: stream, response } = await openai.responses.create({ model, input: "hi", store: false, stream: true }).withResponse();
      const events: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      const completed = events.at(-1)!;
      expect(completed.type).toBe("response.completed");
      const final = (completed as OpenAI.Responses.ResponseCompletedEvent).response;
      const text = final.output.flatMap((item) => (item.type === "message" ? item.content : [])).map((part) => (part.type === "output_text" ? part.text : ""));
      expect(text.join("")).toBe("Hello");
      expect(final.usage).toMatchObject({ cost: expected });
      expect((await ledgerCost(response.headers)).cost).toBe(expected);
      // The SDK's own stream helper still assembles the same response.
      const viaHelper = await openai.responses.stream({ model, input: "hi", store: false }).finalResponse();
      expect(viaHelper.output_text).toBe("Hello");
      expect(viaHelper.usage).toMatchObject({ cost: expected });
    });
  });

  describe("Messages (@anthropic-ai/sdk)", () => {
    it.each([
      ["passed through", "claude-mock", "0.00354"], // 700 x 3/M + 300 cache reads x 0.30/M + 90 x 15/M
      ["over a chat-only upstream", "gpt-mock", "0.0012"],
    ])("buffered, %s: usage.cost equals the header and the ledger", async (_name, model, expected) => {
      const { data, response } = await anthropic.messages.create({ model, max_tokens: 100, messages: [{ role: "user", content: "hi" }] }).withResponse();
      expect(data.content).toEqual([expect.objectContaining({ type: "text", text: "Hello" })]);
      const cost = (data.usage as unknown as { cost: string }).cost;
      expect(cost).toBe(expected);
      expect(response.headers.get("x-gateway-cost-usd")).toBe(cost);
      expect((await ledgerCost(response.headers)).cost).toBe(cost);
    });

    it.each([
      ["passed through", "claude-mock", "0.00345"], // 700 x 3/M + 90 x 15/M (the mock stream reports no cache reads)
      ["over a chat-only upstream", "gpt-mock", "0.0012"],
    ])("streamed, %s: the final message_delta carries usage.cost", async (_name, model, expected) => {
      const { data: stream, response } = await anthropic.messages.create({ model, max_tokens: 100, messages: [{ role: "user", content: "hi" }], stream: true }).withResponse();
      const events: Anthropic.RawMessageStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      expect(events.map((e) => e.type).slice(-2)).toEqual(["message_delta", "message_stop"]);
      const delta = events.at(-2) as Anthropic.RawMessageDeltaEvent;
      expect(delta.usage).toMatchObject({ cost: expected });
      expect((await ledgerCost(response.headers)).cost).toBe(expected);
      const final = await anthropic.messages.stream({ model, max_tokens: 100, messages: [{ role: "user", content: "hi" }] }).finalMessage();
      expect(final.content).toEqual([expect.objectContaining({ type: "text", text: "Hello" })]);
    });

    it("estimated usage (the upstream reported none): the cost is still the charged one", async () => {
      mock.handler = upstream({ withoutUsage: true });
      const { data: stream, response } = await anthropic.messages
        .create({ model: "gpt-mock", max_tokens: 100, messages: [{ role: "user", content: "hi" }], stream: true })
        .withResponse();
      const events: Anthropic.RawMessageStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      const delta = events.find((e) => e.type === "message_delta")!;
      const charged = await ledgerCost(response.headers);
      expect(charged.estimated).toBe(true);
      expect(charged.cost).not.toBe("0.00");
      expect(delta.usage).toMatchObject({ cost: charged.cost });
    });
  });

  it("a stream whose settlement failed (retried in the background) ends without a cost, and the SDK still parses it", async () => {
    const settle = vi.spyOn(gateway.app.ctx.billing, "settle").mockRejectedValueOnce(new Error("injected settlement failure"));
    try {
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      const stream = await openai.chat.completions.create({
        model: "gpt-mock",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
        stream_options: { include_usage: true },
      });
      for await (const chunk of stream) chunks.push(chunk);
      const last = chunks.at(-1)!;
      expect(last.usage).toMatchObject({ prompt_tokens: 1000, completion_tokens: 200 });
      expect(last.usage).not.toHaveProperty("cost");
      expect(settle).toHaveBeenCalled();
    } finally {
      settle.mockRestore();
    }
  });
});
