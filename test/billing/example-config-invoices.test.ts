// The shipped gateway.config.example.yaml bills what the providers' invoices say. For each of its
// models, a provider usage object (shaped as in the providers' documentation) is returned by a mock
// upstream, buffered and streamed through a real gateway; the ledger's cost must equal the invoice
// amount computed by hand (the arithmetic is in each case's comment: tokens x USD per million
// tokens, summed, then / 1e6 for USD; the expected value is in nano-USD, USD x 1e9). Cache writes
// (5 minutes, 1 hour), long-context tiers and web search calls included. Image and video models are
// priced from the same loaded config without a stream (they have none).
import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { priceUsage } from "../../src/billing/pricing.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, chatStream, json, sleep, startMockUpstream, type MockUpstream, type RecordedRequest } from "../support/mock-upstream.js";

type Route = "chat" | "messages" | "responses" | "embeddings";

interface InvoiceCase {
  name: string;
  model: string;
  route: Route;
  /** The provider's usage object: Chat usage (OpenAI, Gemini's OpenAI endpoint), Messages usage (Anthropic), Responses usage. */
  usage: Record<string, unknown>;
  /** Responses output items besides the message (web_search_call). */
  output?: object[];
  /** nano-USD; by deployment for a routing group that picks one at random. */
  expected: bigint | Record<string, bigint>;
}

const CASES: InvoiceCase[] = [
  {
    // 86 uncached x 2.00 + 1,920 cached x 0.50 + 300 x 8.00 = 172 + 960 + 2,400 = 3,532 -> $0.003532
    name: "gpt-4.1 with a cache hit",
    model: "gpt-4.1",
    route: "chat",
    usage: { prompt_tokens: 2006, completion_tokens: 300, total_tokens: 2306, prompt_tokens_details: { cached_tokens: 1920 } },
    expected: 3_532_000n,
  },
  {
    // 1,000 x 0.40 + 500 x 1.60 = 400 + 800 = 1,200 -> $0.0012
    name: "gpt-4.1-mini",
    model: "gpt-4.1-mini",
    route: "chat",
    usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500, prompt_tokens_details: { cached_tokens: 0 } },
    expected: 1_200_000n,
  },
  {
    // 476 x 2.50 + 1,024 x 1.25 + 200 x 10.00 = 1,190 + 1,280 + 2,000 = 4,470 -> $0.00447
    name: "gpt-4o with a cache hit",
    model: "gpt-4o",
    route: "chat",
    usage: { prompt_tokens: 1500, completion_tokens: 200, total_tokens: 1700, prompt_tokens_details: { cached_tokens: 1024 } },
    expected: 4_470_000n,
  },
  {
    // 952 x 0.15 + 2,048 x 0.075 + 1,000 x 0.60 = 142.8 + 153.6 + 600 = 896.4 -> $0.0008964
    name: "gpt-4o-mini with a cache hit",
    model: "gpt-4o-mini",
    route: "chat",
    usage: { prompt_tokens: 3000, completion_tokens: 1000, total_tokens: 4000, prompt_tokens_details: { cached_tokens: 2048 } },
    expected: 896_400n,
  },
  {
    // OpenAI's reasoning guide example: reasoning tokens are part of completion_tokens, priced as output.
    // 75 x 1.10 + 1,186 x 4.40 = 82.5 + 5,218.4 = 5,300.9 -> $0.0053009
    name: "o4-mini with reasoning",
    model: "o4-mini",
    route: "chat",
    usage: { prompt_tokens: 75, completion_tokens: 1186, total_tokens: 1261, completion_tokens_details: { reasoning_tokens: 1024 } },
    expected: 5_300_900n,
  },
  {
    // Responses with one web_search_call item: 1,200 x 2.50 + 300 x 10.00 = 3,000 + 3,000 = 6,000 -> $0.006; + 1 call x $0.025
    name: "gpt-4o Responses with a web search",
    model: "gpt-4o",
    route: "responses",
    usage: { input_tokens: 1200, input_tokens_details: { cached_tokens: 0 }, output_tokens: 300, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 1500 },
    output: [{ type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "q" } }],
    expected: 6_000_000n + 25_000_000n,
  },
  {
    // input 50 x 3.00 + reads 10,000 x 0.30 + 5m writes 1,000 x 3.75 + 1h writes 2,000 x 6.00 + 400 x 15.00
    // = 150 + 3,000 + 3,750 + 12,000 + 6,000 = 24,900 -> $0.0249; + 2 searches x $0.01 = $0.02
    name: "claude-sonnet-4-5: cache reads, 5m and 1h writes, web searches",
    model: "claude-sonnet-4-5",
    route: "messages",
    usage: {
      input_tokens: 50,
      cache_read_input_tokens: 10000,
      cache_creation_input_tokens: 3000,
      cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
      output_tokens: 400,
      server_tool_use: { web_search_requests: 2 },
    },
    expected: 24_900_000n + 20_000_000n,
  },
  {
    // All input 150,000 + 40,000 + 20,000 = 210,000 > 200,000: every token at the long-context prices.
    // 150,000 x 6.00 + 40,000 x 0.60 + 20,000 (5m, only the total reported) x 7.50 + 1,000 x 22.50
    // = 900,000 + 24,000 + 150,000 + 22,500 = 1,096,500 -> $1.0965
    name: "claude-sonnet-4-5 above 200k input tokens",
    model: "claude-sonnet-4-5",
    route: "messages",
    usage: { input_tokens: 150000, cache_read_input_tokens: 40000, cache_creation_input_tokens: 20000, output_tokens: 1000 },
    expected: 1_096_500_000n,
  },
  {
    // A Chat client on an Anthropic upstream (bridged): the 1-hour writes survive the Chat interchange.
    // 200 x 1.00 + 5,000 (1h) x 2.00 + 100 x 5.00 = 200 + 10,000 + 500 = 10,700 -> $0.0107
    name: "claude-haiku-4-5 over Chat with 1h cache writes",
    model: "claude-haiku-4-5",
    route: "chat",
    usage: {
      input_tokens: 200,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 5000,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 5000 },
      output_tokens: 100,
    },
    expected: 10_700_000n,
  },
  {
    // cache_creation_input_tokens without the split: a 5-minute write.
    // 1,000 x 15.00 + 2,000 x 18.75 + 500 x 75.00 = 15,000 + 37,500 + 37,500 = 90,000 -> $0.09
    name: "claude-opus-4-1 with a 5m cache write",
    model: "claude-opus-4-1",
    route: "messages",
    usage: { input_tokens: 1000, cache_read_input_tokens: 0, cache_creation_input_tokens: 2000, output_tokens: 500 },
    expected: 90_000_000n,
  },
  {
    // Gemini's OpenAI endpoint: cached content is cached input; thinking is part of completion_tokens.
    // 4,000 x 1.25 + 8,000 x 0.125 + 900 x 10.00 = 5,000 + 1,000 + 9,000 = 15,000 -> $0.015
    name: "gemini-2.5-pro with cached content",
    model: "gemini-2.5-pro",
    route: "chat",
    usage: {
      prompt_tokens: 12000,
      completion_tokens: 900,
      total_tokens: 12900,
      prompt_tokens_details: { cached_tokens: 8000 },
      completion_tokens_details: { reasoning_tokens: 600 },
    },
    expected: 15_000_000n,
  },
  {
    // 250,000 > 200,000: 250,000 x 2.50 + 2,000 x 15.00 = 625,000 + 30,000 = 655,000 -> $0.655
    name: "gemini-2.5-pro above 200k prompt tokens",
    model: "gemini-2.5-pro",
    route: "chat",
    usage: { prompt_tokens: 250000, completion_tokens: 2000, total_tokens: 252000 },
    expected: 655_000_000n,
  },
  {
    // 500 x 0.30 + 500 x 0.03 + 200 x 2.50 = 150 + 15 + 500 = 665 -> $0.000665
    name: "gemini-2.5-flash with cached content",
    model: "gemini-2.5-flash",
    route: "chat",
    usage: { prompt_tokens: 1000, completion_tokens: 200, total_tokens: 1200, prompt_tokens_details: { cached_tokens: 500 } },
    expected: 665_000n,
  },
  {
    // Weighted between two deployments, each at its own price:
    // openai-mini 1,000 x 0.15 + 100 x 0.60 = 150 + 60 = 210; gemini-flash 1,000 x 0.30 + 100 x 2.50 = 300 + 250 = 550.
    name: "fast-chat (routing group)",
    model: "fast-chat",
    route: "chat",
    usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 },
    expected: { "openai-mini": 210_000n, "gemini-flash": 550_000n },
  },
  {
    // OpenAI's embeddings example usage: 8 x 0.02 = 0.16 -> $0.00000016
    name: "text-embedding-3-small",
    model: "text-embedding-3-small",
    route: "embeddings",
    usage: { prompt_tokens: 8, total_tokens: 8 },
    expected: 160n,
  },
  {
    // 8 x 0.13 = 1.04 -> $0.00000104
    name: "text-embedding-3-large",
    model: "text-embedding-3-large",
    route: "embeddings",
    usage: { prompt_tokens: 8, total_tokens: 8 },
    expected: 1_040n,
  },
];

/** Writes an Anthropic Messages stream whose message_start and message_delta carry the whole usage. */
function anthropicUsageStream(res: ServerResponse, usage: Record<string, unknown>): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const send = (event: string, data: object) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  const { output_tokens: output, server_tool_use: tools, ...input } = usage;
  send("message_start", {
    message: {
      id: "msg_inv",
      type: "message",
      role: "assistant",
      model: "claude-upstream",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...input, output_tokens: 1 },
    },
  });
  send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
  send("content_block_delta", { index: 0, delta: { type: "text_delta", text: "hello" } });
  send("content_block_stop", { index: 0 });
  send("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: output, ...(tools !== undefined && { server_tool_use: tools }) } });
  send("message_stop", {});
  res.end();
}

function responsesObject(c: InvoiceCase) {
  return {
    id: "resp_inv",
    object: "response",
    created_at: 1_700_000_000,
    status: "completed",
    model: "upstream",
    output: [...(c.output ?? []), { type: "message", id: "msg_1", status: "completed", role: "assistant", content: [{ type: "output_text", text: "hello", annotations: [] }] }],
    usage: c.usage,
  };
}

/** Points every provider of the example at the mocks: OpenAI-compatible ones at `openai`, Anthropic at `anthropic`. */
function exampleConfigFor(openaiUrl: string, anthropicUrl: string): string {
  const text = readFileSync(new URL("../../gateway.config.example.yaml", import.meta.url), "utf8");
  return text
    .replace("base_url: https://api.openai.com/v1", `base_url: "${openaiUrl}/v1"`)
    .replace("base_url: https://api.anthropic.com", `base_url: "${anthropicUrl}"`)
    .replace("base_url: https://generativelanguage.googleapis.com/v1beta/openai", `base_url: "${openaiUrl}/v1"`);
}

describe.each(DATABASE_KINDS)("the example config's prices equal the providers' invoices, on %s", (kind) => {
  let openai: MockUpstream;
  let anthropic: MockUpstream;
  let gateway: TestGateway;
  let raw: string;
  let current: InvoiceCase;

  beforeAll(async () => {
    openai = await startMockUpstream();
    anthropic = await startMockUpstream();
    openai.handler = async (req: RecordedRequest, res) => {
      const body = req.body as { stream?: boolean };
      if (req.url.endsWith("/embeddings"))
        return json(res, 200, { object: "list", data: [{ object: "embedding", index: 0, embedding: [0.1, 0.2] }], model: "e", usage: current.usage });
      if (req.url.endsWith("/responses")) {
        if (!body.stream) return json(res, 200, responsesObject(current));
        res.writeHead(200, { "content-type": "text/event-stream" });
        const response = responsesObject(current);
        res.write(
          `event: response.created\ndata: ${JSON.stringify({ type: "response.created", sequence_number: 0, response: { ...response, status: "in_progress", output: [], usage: null } })}\n\n`,
        );
        res.write(`event: response.completed\ndata: ${JSON.stringify({ type: "response.completed", sequence_number: 1, response })}\n\n`);
        res.end();
        return;
      }
      if (body.stream) return chatStream(req, res, ["hello"], { usage: current.usage });
      return json(res, 200, chatCompletion("hello", { usage: current.usage }));
    };
    anthropic.handler = (req: RecordedRequest, res) => {
      const body = req.body as { stream?: boolean };
      if (body.stream) return anthropicUsageStream(res, current.usage);
      return json(res, 200, {
        id: "msg_inv",
        type: "message",
        role: "assistant",
        model: "claude-upstream",
        content: [{ type: "text", text: "hello" }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: current.usage,
      });
    };
    gateway = await startGateway(exampleConfigFor(openai.url, anthropic.url), {
      kind,
      env: { OPENAI_API_KEY: "sk-mock-openai", ANTHROPIC_API_KEY: "sk-ant-mock", GEMINI_API_KEY: "gemini-mock" },
    });
    raw = (await gateway.createAccount({ balance: "1000" })).raw;
  });
  afterAll(async () => {
    await gateway?.close();
    await openai?.close();
    await anthropic?.close();
  });

  async function send(c: InvoiceCase, stream: boolean): Promise<{ requestId: string; body: string }> {
    const content = [{ role: "user", content: "hi" }];
    const body =
      c.route === "embeddings"
        ? { model: c.model, input: "hello" }
        : c.route === "responses"
          ? { model: c.model, input: "hi", stream }
          : c.route === "messages"
            ? { model: c.model, max_tokens: 1000, messages: content, stream }
            : { model: c.model, max_tokens: 1000, messages: content, stream };
    const path = { chat: "/v1/chat/completions", messages: "/v1/messages", responses: "/v1/responses", embeddings: "/v1/embeddings" }[c.route];
    const response = await fetch(`${gateway.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    return { requestId: response.headers.get("x-request-id")!, body: text };
  }

  async function ledgerRow(requestId: string) {
    for (let i = 0; i < 100; i++) {
      const row = await gateway.app.ctx.store.db.selectFrom("ledger").select(["cost_nano", "deployment", "estimated"]).where("request_id", "=", requestId).executeTakeFirst();
      if (row) return row;
      await sleep(20);
    }
    throw new Error(`no ledger row for ${requestId}`);
  }

  for (const c of CASES) {
    const modes = c.route === "embeddings" ? [false] : [false, true];
    for (const stream of modes) {
      it(`${c.name} (${stream ? "streamed" : "buffered"})`, async () => {
        current = c;
        const { requestId, body } = await send(c, stream);
        expect(body).not.toContain("cacheWrite1hTokens");
        const row = await ledgerRow(requestId);
        expect(row.estimated).toBe(0n);
        const expected = typeof c.expected === "bigint" ? c.expected : c.expected[row.deployment ?? ""];
        expect(expected, `deployment ${row.deployment}`).toBeDefined();
        expect(row.cost_nano).toBe(expected);
      });
    }
  }

  it("image and video models: per image, per image token and per second as listed", () => {
    const models = gateway.app.ctx.config.models;
    const none = { cachedInputTokens: 0, reasoningTokens: 0, estimated: false };
    // gpt-image-1 bills tokens: 50 text input x 5.00 + 4,160 image output x 40.00 = 250 + 166,400 = 166,650 -> $0.16665
    expect(priceUsage(models.get("gpt-image-1")!, { ...none, inputTokens: 50, outputTokens: 4160 })).toBe(166_650_000n);
    // dall-e-3 1024x1024 hd: $0.08 an image, 2 images = $0.16
    expect(priceUsage(models.get("dall-e-3")!, { ...none, inputTokens: 0, outputTokens: 0, images: 2 }, "1024x1024/hd")).toBe(160_000_000n);
    // sora-2: 8 s x $0.10 = $0.80; veo-3.0: 8 s x $0.40 = $3.20
    expect(priceUsage(models.get("sora-2")!, { ...none, inputTokens: 0, outputTokens: 0, videoSeconds: 8 })).toBe(800_000_000n);
    expect(priceUsage(models.get("veo-3.0-generate-001")!, { ...none, inputTokens: 0, outputTokens: 0, videoSeconds: 8 })).toBe(3_200_000_000n);
  });

  it("covers every model of the example config", () => {
    const covered = new Set([...CASES.map((c) => c.model), "gpt-image-1", "dall-e-3", "sora-2", "veo-3.0-generate-001"]);
    expect([...gateway.app.ctx.config.models.keys()].filter((id) => !covered.has(id))).toEqual([]);
  });
});
