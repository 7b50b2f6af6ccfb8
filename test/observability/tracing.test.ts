// OpenTelemetry traces end to end: a test OTLP/HTTP receiver on 127.0.0.1 collects the spans the
// gateway exports for a request with a client traceparent and a 429 failover, and for a stream.
// Checked: the parent/child structure, the gen_ai.* attributes, the traceparent each upstream attempt
// received (same trace, the attempt's span as parent), and that no canary secret (upstream key,
// client key, prompt and completion text, upstream host) is in an exported byte. Off by default.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { chatCompletion, chatStream, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";

const CANARY_KEY = "sk-canary-upstream-key-7f3a9c21d0";
const OTHER_KEY = "sk-canary-upstream-key-second-88e1";
const CANARY_PROMPT = "CANARY-PROMPT-TEXT-91b2c7";
const CANARY_COMPLETION = "CANARY-COMPLETION-TEXT-55d0e4";
const CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: OtlpAttribute[];
  status?: { code?: number };
}

interface Receiver {
  url: string;
  bodies: string[];
  spans(): OtlpSpan[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method === "POST" && req.url === "/v1/traces") bodies.push(Buffer.concat(chunks).toString("utf8"));
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    spans: () =>
      bodies.flatMap((b) =>
        (JSON.parse(b) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> }).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)),
      ),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function attrs(span: OtlpSpan): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of span.attributes) {
    out[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue!));
  }
  return out;
}

let mock: MockUpstream | undefined;
let gateway: TestGateway | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await gateway?.close();
  await mock?.close();
  await receiver?.close();
  gateway = mock = receiver = undefined;
});

const SERVER = 2;
const CLIENT = 3;

describe("OpenTelemetry traces", () => {
  it("exports a request's spans with their structure and gen_ai attributes, propagates traceparent, leaks no secret", async () => {
    receiver = await startReceiver();
    mock = await startMockUpstream();
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, openaiKeys: [CANARY_KEY, OTHER_KEY] }), {
      env: { OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: "gw-test" },
    });
    const { raw } = await gateway.createAccount();
    let calls = 0;
    mock.handler = (_req, res) =>
      ++calls === 1 ? json(res, 429, { error: { message: "slow down" } }, { "retry-after": "30" }) : json(res, 200, chatCompletion(CANARY_COMPLETION));
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json", traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
      body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: CANARY_PROMPT }] }),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain(CANARY_COMPLETION);
    // A stream without a traceparent: a trace of its own.
    mock.handler = (req, res) => chatStream(req, res, [CANARY_COMPLETION, " more"]);
    const streamed = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mock", stream: true, messages: [{ role: "user", content: CANARY_PROMPT }] }),
    });
    expect(await streamed.text()).toContain("[DONE]");
    await gateway.app.ctx.pipeline.tracing!.flush();

    const spans = receiver.spans();
    const ofClientTrace = spans.filter((s) => s.traceId === CLIENT_TRACE);
    const root = ofClientTrace.find((s) => s.kind === SERVER)!;
    expect(root.name).toBe("POST /v1/chat/completions");
    expect(root.parentSpanId).toBe(CLIENT_SPAN);
    expect(attrs(root)).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/v1/chat/completions",
      "http.response.status_code": 200,
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-mock",
      "gen_ai.response.model": "upstream-gpt",
      "gen_ai.usage.input_tokens": 10,
      "gen_ai.usage.output_tokens": 5,
      "gateway.provider": "mockai",
      "gateway.attempts": 2,
      "gateway.cost_usd": "0.00002",
    });
    expect(attrs(root)["gateway.request_id"]).toBe(response.headers.get("x-request-id"));
    const children = ofClientTrace.filter((s) => s !== root);
    expect(children.map((s) => s.name).sort()).toEqual(["gateway.admission", "gateway.settlement", "gateway.upstream_attempt", "gateway.upstream_attempt"]);
    for (const child of children) expect(child.parentSpanId).toBe(root.spanId);
    const attempts = children.filter((s) => s.name === "gateway.upstream_attempt").sort((a, b) => Number(attrs(a)["gateway.attempt"]) - Number(attrs(b)["gateway.attempt"]));
    expect(attempts.map((s) => s.kind)).toEqual([CLIENT, CLIENT]);
    expect(attempts.map((s) => attrs(s)["gateway.attempt.result"])).toEqual(["rate_limited", "success"]);
    expect(attempts.map((s) => attrs(s)["http.response.status_code"])).toEqual([429, 200]);
    // Each upstream request carried its attempt's context: the client's trace, the attempt span as parent.
    expect(mock.requests.slice(0, 2).map((r) => r.headers.traceparent)).toEqual(attempts.map((s) => `00-${CLIENT_TRACE}-${s.spanId}-01`));

    // The stream: a new trace, its root a SERVER span without a parent, with the same children.
    const streamRoot = spans.find((s) => s.kind === SERVER && s.traceId !== CLIENT_TRACE)!;
    expect(streamRoot.parentSpanId ?? "").toBe("");
    expect(attrs(streamRoot)).toMatchObject({ "gen_ai.request.model": "gpt-mock", "gen_ai.usage.output_tokens": 2, "http.response.status_code": 200 });
    const streamChildren = spans.filter((s) => s.traceId === streamRoot.traceId && s !== streamRoot);
    expect(streamChildren.map((s) => s.name).sort()).toEqual(["gateway.admission", "gateway.settlement", "gateway.upstream_attempt"]);
    expect(mock.requests[2]!.headers.traceparent).toBe(`00-${streamRoot.traceId}-${streamChildren.find((s) => s.kind === CLIENT)!.spanId}-01`);

    // No secret and no content in an exported byte.
    const exported = receiver.bodies.join("\n");
    expect(exported).toContain("gw-test");
    for (const canary of [CANARY_KEY, OTHER_KEY, CANARY_PROMPT, CANARY_COMPLETION, raw, mock.host]) expect(exported).not.toContain(canary);
  });

  it("records a hold's release and each background settlement retry as spans of the request's trace", async () => {
    receiver = await startReceiver();
    mock = await startMockUpstream();
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }), {
      env: { OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    const { raw } = await gateway.createAccount();
    const post = (body: object) =>
      fetch(`${gateway!.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], ...body }),
      });
    // 1. The upstream refuses the request: its hold is released.
    mock.handler = (_req, res) => json(res, 400, { error: { message: "bad request" } });
    const refused = await post({});
    expect(refused.status).toBe(400);
    await refused.text();
    // 2. A stream whose settlement fails once: charged by a retry after the response ended.
    const { billing, settlementRetries, tracing } = gateway.app.ctx.pipeline;
    const settle = billing.settle.bind(billing);
    let failures = 1;
    billing.settle = (...args: Parameters<typeof settle>) => (failures-- > 0 ? Promise.reject(Object.assign(new Error("injected"), { type: "internal_error" })) : settle(...args));
    mock.handler = (req, res) => chatStream(req, res, ["Hi"]);
    const streamed = await post({ stream: true });
    expect(await streamed.text()).toContain("[DONE]");
    for (const deadline = Date.now() + 5000; settlementRetries.pending > 0 && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 25));
    expect(settlementRetries.pending).toBe(0);
    await tracing!.flush();

    const spans = receiver.spans();
    const roots = spans.filter((s) => s.kind === SERVER);
    const childrenOf = (root: OtlpSpan) => spans.filter((s) => s.traceId === root.traceId && s !== root);
    const refusedRoot = roots.find((s) => attrs(s)["http.response.status_code"] === 400)!;
    expect(
      childrenOf(refusedRoot)
        .map((s) => s.name)
        .sort(),
    ).toEqual(["gateway.admission", "gateway.hold_release", "gateway.upstream_attempt"]);
    const streamRoot = roots.find((s) => attrs(s)["http.response.status_code"] === 200)!;
    const streamChildren = childrenOf(streamRoot);
    expect(streamChildren.map((s) => s.name).sort()).toEqual(["gateway.admission", "gateway.settlement", "gateway.settlement_retry", "gateway.upstream_attempt"]);
    for (const child of streamChildren) expect(child.parentSpanId).toBe(streamRoot.spanId);
    const failed = streamChildren.find((s) => s.name === "gateway.settlement")!;
    expect(failed.status?.code).toBe(2);
    expect(attrs(failed)["error.type"]).toBe("internal_error");
    const retry = streamChildren.find((s) => s.name === "gateway.settlement_retry")!;
    expect(attrs(retry)).toMatchObject({ "gateway.attempt": 1 });
    expect(retry.status?.code ?? 0).not.toBe(2);
  });

  it("is off without OTEL_TRACES_EXPORTER: no tracer, nothing sent, no traceparent upstream", async () => {
    receiver = await startReceiver();
    mock = await startMockUpstream();
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }), { env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
    expect(gateway.app.ctx.pipeline.tracing).toBeNull();
    const { raw } = await gateway.createAccount();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("ok"));
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json", traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
      body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(response.status).toBe(200);
    expect(mock.requests[0]!.headers.traceparent).toBeUndefined();
    expect(receiver.bodies).toHaveLength(0);
  });
});
