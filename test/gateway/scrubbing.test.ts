// Canary secrets planted by the upstream in bodies, stream events, error messages and headers
// never reach the client: not the upstream key, host, organisation, project or request id.
import type { ServerResponse } from "node:http";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anthropicMessage, chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";

const UPSTREAM_KEY = "sk-proj-CANARYupstreamKEY0123456789abcdef";
const OWN_KEY = "CANARYownACCOUNTkey9876543210zyx";
const ORG = "org-CANARYorg12345678";
const PROJECT = "proj_CANARYproject1234";
const UPSTREAM_REQUEST_ID = "req_CANARYrequest0123456789abcdef";

describe("scrubbing", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let key: string;
  let canaries: string[];

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, openaiKeys: [UPSTREAM_KEY], anthropicKeys: [UPSTREAM_KEY] }));
    key = (await gateway.createAccount()).raw;
    canaries = [UPSTREAM_KEY, ORG, PROJECT, UPSTREAM_REQUEST_ID, mock.host, mock.url, OWN_KEY];
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  const leakText = (req: { key: string }) => `key ${req.key} org ${ORG} project ${PROJECT} at ${mock.url}/v1/chat/completions, request id ${UPSTREAM_REQUEST_ID}`;
  const leakHeaders = () => ({
    "openai-organization": ORG,
    "openai-project": PROJECT,
    "x-request-id": UPSTREAM_REQUEST_ID,
    "set-cookie": `s=${UPSTREAM_KEY}`,
    server: mock.host,
    "x-ratelimit-remaining-requests": "99",
  });

  function expectClean(text: string, headers: Headers) {
    for (const canary of canaries) expect(text).not.toContain(canary);
    for (const name of ["openai-organization", "openai-project", "set-cookie", "x-ratelimit-remaining-requests", "server"]) expect(headers.get(name)).toBeNull();
    expect(headers.get("x-request-id")).not.toBe(UPSTREAM_REQUEST_ID);
  }

  async function call(path: string, body: object) {
    const response = await fetch(`${gateway.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  it("buffered bodies", async () => {
    mock.handler = (req, res) =>
      json(res, 200, chatCompletion(leakText(req), { extra: { organization: ORG, project_id: PROJECT, request_id: UPSTREAM_REQUEST_ID } }), leakHeaders());
    const result = await call("/v1/chat/completions", { model: "gpt-mock", messages: [{ role: "user", content: "x" }] });
    expect(result.status).toBe(200);
    expect(result.text).toContain("[redacted]");
    expectClean(result.text, result.headers);
  });

  it("stream events, split across chunks", async () => {
    mock.handler = (req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream", ...leakHeaders() });
      const chunk = JSON.stringify({
        id: "c",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        choices: [{ index: 0, delta: { content: leakText(req) }, finish_reason: null }],
      });
      const frame = `data: ${chunk}\n\n`;
      // Split the frame in the middle of the key so a per-chunk scrubber would miss it.
      const cut = frame.indexOf(req.key) + 10;
      res.write(frame.slice(0, cut));
      setTimeout(() => {
        res.write(frame.slice(cut));
        res.end(
          `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`,
        );
      }, 20);
    };
    const result = await call("/v1/chat/completions", { model: "gpt-mock", messages: [{ role: "user", content: "x" }], stream: true });
    expect(result.text).toContain("[redacted]");
    expectClean(result.text, result.headers);
  });

  it("error messages, in both error envelopes", async () => {
    mock.handler = (req, res) => json(res, 400, { error: { message: leakText(req), type: "invalid_request_error" } }, leakHeaders());
    const openai = await call("/v1/chat/completions", { model: "gpt-mock", messages: [{ role: "user", content: "x" }] });
    expect(openai.status).toBe(400);
    expectClean(openai.text, openai.headers);
    const anthropic = await call("/v1/messages", { model: "claude-mock", max_tokens: 10, messages: [{ role: "user", content: "x" }] });
    expect(anthropic.status).toBe(400);
    expect(JSON.parse(anthropic.text).type).toBe("error");
    expectClean(anthropic.text, anthropic.headers);
  });

  it("short organisation and request ids in an error message, with no header naming them", async () => {
    const message = "Rate limit reached for gpt-4o in organization org-abc123def456 on tokens per min (req_0123456789ab).";
    mock.handler = (_req, res) => json(res, 400, { error: { message, type: "invalid_request_error" } });
    const result = await call("/v1/chat/completions", { model: "gpt-mock", messages: [{ role: "user", content: "x" }] });
    expect(result.status).toBe(400);
    expect(result.text).toContain("Rate limit reached for gpt-4o in organization [redacted] on tokens per min ([redacted]).");
  });

  it("an account's own upstream key, whatever its shape", async () => {
    const own = await gateway.createAccount();
    await gateway.app.ctx.store.upstreamKeys.add({ accountId: own.account.id, provider: "mockai", key: OWN_KEY });
    mock.handler = (req, res) => json(res, 200, chatCompletion(`your key is ${req.key}`));
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${own.raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "x" }] }),
    });
    const text = await response.text();
    expect(mock.requests.at(-1)!.key).toBe(OWN_KEY);
    expect(text).not.toContain(OWN_KEY);
  });

  it("through the Anthropic SDK on a translated stream", async () => {
    mock.handler = (req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const base = { id: "c", object: "chat.completion.chunk", created: 1, model: "m" };
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: leakText(req) }, finish_reason: null }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`);
      res.end(`data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } })}\n\ndata: [DONE]\n\n`);
    };
    const client = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
    const final = await client.messages.stream({ model: "gpt-mock", max_tokens: 10, messages: [{ role: "user", content: "x" }] }).finalMessage();
    const text = JSON.stringify(final);
    for (const canary of canaries) expect(text).not.toContain(canary);
  });
});

// The upstream's own ids, as its response headers name them, echoed in short forms no pattern
// knows: on every client format, bridged and passed through, buffered, streamed and failed.
describe("identifiers the upstream names in its response headers", () => {
  const IDS = {
    "openai-organization": "org-abc123def456",
    "openai-project": "proj_a1b2c3d4",
    "x-request-id": "7c9e6679-7425-40de-944b-e07fc1f66afe",
    "request-id": "req_0123456789ab",
    "anthropic-organization-id": "0b1e2f3a-5c6d-4e7f-8a9b-0c1d2e3f4a5b",
    "apim-request-id": "3f2504e0-4f89-41d3-9a0c-0305e82c3301",
    "x-ms-request-id": "ms-9c2e1b7f3a",
    "x-amzn-requestid": "b0c1d2e3-f4a5-4b6c-8d7e-9f0a1b2c3d4e",
    "x-amz-request-id": "AMZ0045XYZQ7",
    "x-goog-request-id": "goog-7f3a9c2e1b",
    "cf-ray": "8a1b2c3d4e5f6789-SJC",
  };
  // What the upstream's texts say: each id bare (no "request id" before it), the ray without its suffix.
  const CANARIES = [...Object.values(IDS).filter((v) => !v.endsWith("-SJC")), "8a1b2c3d4e5f6789"];
  const LEAK = `Rate limit reached for gpt-4o in organization ${IDS["openai-organization"]} on tokens per min; ${CANARIES.join(" / ")}.`;

  let mock: MockUpstream;
  let gateway: TestGateway;
  let key: string;
  let failWith = 0; // 0: answer normally; else this status with LEAK in the error body

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (req, res) => {
      // retry-after 0: a 429 leaves no key cooling down for the next case.
      if (failWith) return json(res, failWith, { error: { message: LEAK, type: "invalid_request_error" }, type: "error" }, { ...IDS, "retry-after": "0" });
      const path = req.url.split("?")[0]!;
      const stream = req.body?.stream === true;
      if (path === "/v1/chat/completions") return stream ? sendSplit(res, chatFrames()) : json(res, 200, chatCompletion(LEAK, { extra: { id: `chatcmpl-${CANARIES[2]}` } }), IDS);
      if (path === "/v1/messages") return stream ? sendSplit(res, messagesFrames()) : json(res, 200, anthropicMessage(LEAK), IDS);
      if (path === "/v1/responses") return stream ? sendSplit(res, responsesFrames()) : json(res, 200, responsesBody(), IDS);
      if (path === "/v1/images/generations") return json(res, 200, { created: 1, data: [{ b64_json: "iVBORw0KGgo".repeat(200), revised_prompt: LEAK }] }, IDS);
      json(res, 404, { error: { message: "no route" } });
    };
    gateway = await startGateway(`
providers:
  idsai:
    type: openai
    base_url: "${mock.url}/v1"
    keys: ["sk-mock-openai-key-0001"]
    apis: [chat, responses, images]
  idschat:
    type: openai
    base_url: "${mock.url}/v1"
    keys: ["sk-mock-openai-key-0002"]
    apis: [chat]
  idsanthropic:
    type: anthropic
    base_url: "${mock.url}"
    keys: ["sk-ant-mock-key-0001"]
models:
  - { id: gpt-ids, kind: chat, provider: idsai, pricing: { input_per_mtok: "1", output_per_mtok: "2" } }
  - { id: gpt-chat-only, kind: chat, provider: idschat, pricing: { input_per_mtok: "1", output_per_mtok: "2" } }
  - { id: claude-ids, kind: chat, provider: idsanthropic, default_output_tokens: 100, pricing: { input_per_mtok: "1", output_per_mtok: "2" } }
  - { id: image-ids, kind: image, provider: idsai, pricing: { per_image: { default: "0.01" } } }
tiers:
  standard: { models: ["*"] }
server:
  default_tier: standard
# These tests answer 500 on purpose, many times on one key: its breaker must not open.
upstream_health: { min_requests: 1000000 }
`);
    key = (await gateway.createAccount()).raw;
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  // The whole stream, written in two pieces cut inside the first id, a moment apart.
  function sendSplit(res: ServerResponse, frames: string[]) {
    res.writeHead(200, { "content-type": "text/event-stream", ...IDS });
    const text = frames.join("");
    const cut = text.indexOf(CANARIES[0]!) + 6;
    res.write(text.slice(0, cut));
    setTimeout(() => res.end(text.slice(cut)), 20);
  }
  const sse = (data: object, event?: string) => `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;
  function chatFrames(): string[] {
    const base = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "upstream-gpt" };
    return [
      ...CANARIES.map((id) => sse({ ...base, choices: [{ index: 0, delta: { content: `${LEAK} ${id} ` }, finish_reason: null }] })),
      sse({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
      sse({ ...base, choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }),
      "data: [DONE]\n\n",
    ];
  }
  function messagesFrames(): string[] {
    return [
      sse(
        {
          type: "message_start",
          message: {
            id: "msg_1",
            type: "message",
            role: "assistant",
            model: "claude-upstream",
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 3, output_tokens: 1 },
          },
        },
        "message_start",
      ),
      sse({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }, "content_block_start"),
      ...CANARIES.map((id) => sse({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: `${LEAK} ${id} ` } }, "content_block_delta")),
      sse({ type: "content_block_stop", index: 0 }, "content_block_stop"),
      sse({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 4 } }, "message_delta"),
      sse({ type: "message_stop" }, "message_stop"),
    ];
  }
  function responsesBody() {
    return {
      id: "resp_1",
      object: "response",
      model: "upstream",
      status: "completed",
      output: [{ type: "message", id: "msg_1", role: "assistant", content: [{ type: "output_text", text: LEAK, annotations: [] }] }],
      usage: { input_tokens: 3, output_tokens: 4, total_tokens: 7 },
    };
  }
  function responsesFrames(): string[] {
    return [
      sse({ type: "response.created", response: { ...responsesBody(), status: "in_progress", output: [] } }, "response.created"),
      ...CANARIES.map((id) =>
        sse({ type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: `${LEAK} ${id} ` }, "response.output_text.delta"),
      ),
      sse({ type: "response.completed", response: responsesBody() }, "response.completed"),
    ];
  }

  async function call(path: string, body: object) {
    const response = await fetch(`${gateway.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    const everything = [text, ...[...response.headers].map(([name, value]) => `${name}: ${value}`)].join("\n");
    for (const canary of CANARIES) expect(everything, `${path} leaked ${canary}`).not.toContain(canary);
    return { status: response.status, text };
  }

  const ROUTES: Array<[string, string, (stream: boolean) => object]> = [
    ["chat, passed through", "/v1/chat/completions", (stream) => ({ model: "gpt-ids", stream, messages: [{ role: "user", content: "x" }] })],
    ["chat over Anthropic", "/v1/chat/completions", (stream) => ({ model: "claude-ids", stream, messages: [{ role: "user", content: "x" }] })],
    ["messages, passed through", "/v1/messages", (stream) => ({ model: "claude-ids", stream, max_tokens: 10, messages: [{ role: "user", content: "x" }] })],
    ["messages over chat", "/v1/messages", (stream) => ({ model: "gpt-ids", stream, max_tokens: 10, messages: [{ role: "user", content: "x" }] })],
    ["responses, passed through", "/v1/responses", (stream) => ({ model: "gpt-ids", stream, input: "x" })],
    ["responses over chat", "/v1/responses", (stream) => ({ model: "gpt-chat-only", stream, input: "x", store: false })],
  ];

  it.each(ROUTES)("%s: buffered and streamed bodies", async (_name, path, body) => {
    failWith = 0;
    for (const stream of [false, true]) {
      const result = await call(path, body(stream));
      expect(result.status, result.text).toBe(200);
      expect(result.text).toContain("[redacted]");
    }
  });

  it.each(ROUTES)("%s: error bodies (400, 500, 429)", async (_name, path, body) => {
    for (const status of [400, 500, 429]) {
      failWith = status;
      for (const stream of [false, true]) {
        const result = await call(path, body(stream));
        expect(result.status).toBe(status === 400 ? 400 : status === 429 ? 429 : 502);
      }
    }
    failWith = 0;
  });

  it("images: body and error", async () => {
    failWith = 0;
    const ok = await call("/v1/images/generations", { model: "image-ids", prompt: "x" });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.text).toContain("[redacted]");
    failWith = 400;
    expect((await call("/v1/images/generations", { model: "image-ids", prompt: "x" })).status).toBe(400);
    failWith = 0;
  });
});
