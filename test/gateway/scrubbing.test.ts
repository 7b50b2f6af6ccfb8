// Canary secrets planted by the upstream in bodies, stream events, error messages and headers
// never reach the client: not the upstream key, host, organisation, project or request id.
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
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

  const leakText = (req: { key: string }) =>
    `key ${req.key} org ${ORG} project ${PROJECT} at ${mock.url}/v1/chat/completions, request id ${UPSTREAM_REQUEST_ID}`;
  const leakHeaders = () => ({ "openai-organization": ORG, "openai-project": PROJECT, "x-request-id": UPSTREAM_REQUEST_ID, "set-cookie": `s=${UPSTREAM_KEY}`, server: mock.host, "x-ratelimit-remaining-requests": "99" });

  function expectClean(text: string, headers: Headers) {
    for (const canary of canaries) expect(text).not.toContain(canary);
    for (const name of ["openai-organization", "openai-project", "set-cookie", "x-ratelimit-remaining-requests", "server"]) expect(headers.get(name)).toBeNull();
    expect(headers.get("x-request-id")).not.toBe(UPSTREAM_REQUEST_ID);
  }

  async function call(path: string, body: object) {
    const response = await fetch(`${gateway.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  it("buffered bodies", async () => {
    mock.handler = (req, res) => json(res, 200, chatCompletion(leakText(req), { extra: { organization: ORG, project_id: PROJECT, request_id: UPSTREAM_REQUEST_ID } }), leakHeaders());
    const result = await call("/v1/chat/completions", { model: "gpt-mock", messages: [{ role: "user", content: "x" }] });
    expect(result.status).toBe(200);
    expect(result.text).toContain("[redacted]");
    expectClean(result.text, result.headers);
  });

  it("stream events, split across chunks", async () => {
    mock.handler = (req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream", ...leakHeaders() });
      const chunk = JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: leakText(req) }, finish_reason: null }] });
      const frame = `data: ${chunk}\n\n`;
      // Split the frame in the middle of the key so a per-chunk scrubber would miss it.
      const cut = frame.indexOf(req.key) + 10;
      res.write(frame.slice(0, cut));
      setTimeout(() => {
        res.write(frame.slice(cut));
        res.end(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`);
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
