// A hostile client at the HTTP edge (issue 19): slow senders, connection floods, unread bodies,
// requests Node's parser refuses, aborted uploads. Raw sockets where an HTTP client would hide them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatCompletion, chatStream, json, sleep, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { MIB, RawClient, expectCatalogued, waitForNoConnections, within } from "../support/raw-client.js";

const GIB = 1024 * 1024 * 1024;

function configWith(mockUrl: string, serverLines: string): string {
  return mockConfig({ openaiUrl: mockUrl }).replace("server:\n  default_tier: standard", `server:\n  default_tier: standard\n${serverLines}`);
}

describe("slow clients, timeouts and the connection cap", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(configWith(mock.url, "  headers_timeout_ms: 300\n  request_timeout_ms: 600\n  keep_alive_timeout_ms: 400\n"));
    key = (await gateway.createAccount()).raw;
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it("a client trickling its headers gets 400 request_timeout and a closed connection", async () => {
    const client = await RawClient.open(gateway.url);
    client.send("POST /dashboard/api/signin HTTP/1.1\r\nHost: x\r\nX-Slow: ");
    void client.trickle(100);
    await within(client.ended, 2_000, "answered and closed");
    client.socket.destroy();
    const response = expectCatalogued(client, 400, "invalid_request");
    expect(response.body.error.code).toBe("request_timeout");
    const line = gateway.logs.find((l) => l.request_id === response.body.request_id);
    expect(line).toMatchObject({ level: 30, msg: "request refused by the HTTP parser", status: 400, reason: "ERR_HTTP_REQUEST_TIMEOUT" });
  });

  it("a client trickling its body is cut after the request timeout, also unauthenticated on the sign-in route", async () => {
    for (const [path, auth] of [
      ["/dashboard/api/signin", ""],
      ["/v1/chat/completions", `Authorization: Bearer ${key}\r\n`],
    ] as const) {
      const client = await RawClient.open(gateway.url);
      client.send(`POST ${path} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`);
      void client.trickle(100);
      await within(client.ended, 2_000, `${path} answered and closed`);
      client.socket.destroy();
      expect(expectCatalogued(client, 400, "invalid_request").body.error.code).toBe("request_timeout");
    }
  });

  it("a connection that sends nothing, or idles after a response, is closed", async () => {
    const silent = await RawClient.open(gateway.url);
    await within(silent.ended, 2_000, "silent connection closed");
    expect(expectCatalogued(silent, 400, "invalid_request").body.error.code).toBe("request_timeout");
    silent.socket.destroy();
    const idle = await RawClient.open(gateway.url);
    idle.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    await within(idle.ended, 2_000, "idle keep-alive connection closed");
    expect(idle.received.toString()).toMatch(/^HTTP\/1\.1 200 /);
  });

  it("a response streamed for longer than every timeout completes", async () => {
    const pieces = Array.from({ length: 16 }, (_, i) => `p${i} `);
    mock.handler = (req, res) => chatStream(req, res, pieces, { delayMs: 100 });
    const started = Date.now();
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mock", stream: true, messages: [{ role: "user", content: "Hi" }] }),
    });
    const text = await response.text();
    expect(Date.now() - started).toBeGreaterThan(1_200);
    expect(response.status).toBe(200);
    for (const piece of pieces) expect(text).toContain(piece);
    expect(text).toContain("data: [DONE]");
  });

  it("connections beyond max_connections are closed on arrival, and admitted again once others close", async () => {
    const capped = await startGateway(configWith(mock.url, "  max_connections: 3\n"));
    const held: RawClient[] = [];
    try {
      held.push(...(await Promise.all([0, 1, 2].map(() => RawClient.open(capped.url)))));
      await sleep(50);
      const extra = await RawClient.open(capped.url);
      await within(extra.ended, 2_000, "extra connection closed");
      expect(extra.received.length).toBe(0);
      held[0]!.socket.destroy();
      await sleep(50);
      const again = await RawClient.open(capped.url);
      again.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      await within(again.ended, 2_000, "admitted connection answered");
      expect(again.received.toString()).toMatch(/^HTTP\/1\.1 200 /);
      expect(capped.logs.some((l) => l.level === 40 && l.max_connections === 3)).toBe(true);
    } finally {
      for (const client of held) client.socket.destroy();
      await capped.close();
    }
  });
});

describe("answers given before the body was read, and refusals by Node's parser", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("fine"));
    gateway = await startGateway(configWith(mock.url, "  body_limit_mb: 1\n"));
    key = (await gateway.createAccount()).raw;
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it("an unauthenticated 1 GiB upload gets a readable 401 and a closed connection, not a drained GiB", async () => {
    const client = await RawClient.open(gateway.url);
    client.send(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${GIB}\r\n\r\n`);
    await client.flood(64 * MIB);
    await within(client.closed, 4_000, "closed");
    expect(client.written).toBeLessThan(64 * MIB);
    expectCatalogued(client, 401, "auth_error");
    await waitForNoConnections(gateway, 3_000);
  });

  it("a client that keeps sending an oversized body reads the 413, announced or chunked", async () => {
    for (const framing of [`Content-Length: ${GIB}`, "Transfer-Encoding: chunked"]) {
      const client = await RawClient.open(gateway.url);
      client.send(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`);
      if (framing.startsWith("Transfer")) client.send(`${(4 * MIB).toString(16)}\r\n`);
      await client.flood(64 * MIB);
      await within(client.closed, 4_000, `${framing}: closed`);
      expect(client.written).toBeLessThan(64 * MIB);
      expectCatalogued(client, 413, "payload_too_large");
      await waitForNoConnections(gateway, 3_000);
    }
  });

  it("after a 413 the gateway lingers: the rest of the body is read and dropped, not answered with a reset", async () => {
    const client = await RawClient.open(gateway.url);
    const errors: Error[] = [];
    client.socket.on("error", (error) => errors.push(error));
    client.send(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${3 * MIB}\r\n\r\n`);
    client.send(Buffer.alloc(MIB, 0x61));
    await within(client.ended, 3_000, "answered");
    expectCatalogued(client, 413, "payload_too_large");
    // A client still sending when the answer arrives (or one that reads only after sending) must
    // not see its writes fail: a reset can discard the answer before the client has read it.
    await sleep(100);
    client.send(Buffer.alloc(2 * MIB, 0x61));
    client.socket.end();
    await within(client.closed, 3_000, "closed");
    expect(errors).toEqual([]);
    await waitForNoConnections(gateway, 1_000);
  });

  it("keeps the connection reusable after an early answer to a request with no body or a small one", async () => {
    const client = await RawClient.open(gateway.url);
    client.send("GET /no-such-path HTTP/1.1\r\nHost: x\r\n\r\n");
    client.send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
    client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    const deadline = Date.now() + 2_000;
    while (!client.received.toString().includes('{"status":"ok"}') && Date.now() < deadline) await sleep(10);
    const text = client.received.toString();
    expect(text.match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 404", "HTTP/1.1 401", "HTTP/1.1 200"]);
    expect(text).not.toMatch(/connection: close/i);
    client.socket.destroy();
  });

  it("renders Node parser refusals through the catalogue, with a request id and one log line", async () => {
    const cases: Array<[string, number, string, string | null]> = [
      [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"s3cr3t".repeat(4_000)}\r\n\r\n`, 413, "payload_too_large", "headers"],
      ["POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400, "invalid_request", "content-length"],
      ["POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nhello", 400, "invalid_request", "transfer-encoding"],
      ["BREW /pot HTCPCP/1.0\r\n\r\n", 400, "invalid_request", null],
    ];
    for (const [request, status, type, param] of cases) {
      const client = await RawClient.open(gateway.url);
      client.send(request);
      await within(client.ended, 3_000, `${request.slice(0, 20)} answered`);
      const response = expectCatalogued(client, status, type);
      expect(response.body.error.param).toBe(param);
      const lines = gateway.logs.filter((l) => l.request_id === response.body.request_id);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 30, status, error: type });
    }
    expect(JSON.stringify(gateway.logs)).not.toContain("s3cr3t");
    await waitForNoConnections(gateway, 3_000);
  });

  it("logs a client that aborts its upload at info with the request id, not as an unhandled error", async () => {
    const before = gateway.logs.length;
    const client = await RawClient.open(gateway.url);
    client.send(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":`);
    await sleep(100);
    client.socket.destroy();
    await sleep(200);
    const lines = gateway.logs.slice(before);
    expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
    const aborted = lines.find((l) => l.msg === "connection closed before the request body was complete");
    expect(aborted).toMatchObject({ level: 30, path: "/v1/chat/completions" });
    expect(aborted!.request_id).toMatch(/^req_/);
  });
});
