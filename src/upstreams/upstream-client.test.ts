import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NoResponseError, sendUpstream, splitUpstreamUrl } from "./upstream-client.js";

describe("splitUpstreamUrl", () => {
  it("splits like the WHATWG URL parse that undici's request(url) does", () => {
    expect(splitUpstreamUrl("https://api.example.com/v1/chat/completions")).toEqual({ origin: "https://api.example.com", path: "/v1/chat/completions" });
    expect(splitUpstreamUrl("http://127.0.0.1:8080/v1beta/models/x:generate?alt=sse")).toEqual({ origin: "http://127.0.0.1:8080", path: "/v1beta/models/x:generate?alt=sse" });
    // Normalised as before: default port dropped, host lower-cased, a space percent-encoded, dot segments resolved.
    expect(splitUpstreamUrl("HTTPS://API.Example.com:443/v1/videos/a b/../c")).toEqual({ origin: "https://api.example.com", path: "/v1/videos/c" });
  });

  it("leaves what is not an http(s) URL to undici's own checks", () => {
    expect(splitUpstreamUrl("not a url")).toBeNull();
    expect(splitUpstreamUrl("ftp://example.com/x")).toBeNull();
  });

  it("answers from memory the second time and stays bounded", () => {
    const url = "http://127.0.0.1:1/memo";
    expect(splitUpstreamUrl(url)).toBe(splitUpstreamUrl(url));
    for (let i = 0; i < 2_000; i++) splitUpstreamUrl(`http://127.0.0.1:1/videos/${i}`);
    // Still right after the memory started over (it holds at most 512 URLs).
    expect(splitUpstreamUrl("http://127.0.0.1:1/videos/7")).toEqual({ origin: "http://127.0.0.1:1", path: "/videos/7" });
  });
});

describe("sendUpstream", () => {
  const seen: Array<{ method?: string; url?: string; authorization?: string; body: string }> = [];
  const server = createServer((req: IncomingMessage, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, authorization: req.headers.authorization, body });
      res.setHeader("content-type", "application/json");
      res.end('{"ok":true}');
    });
  });
  let base = "";
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("sends method, path with query, headers and body to the URL's origin", async () => {
    const response = await sendUpstream({
      url: `${base}/v1/chat/completions?x=1`,
      method: "POST",
      headers: { authorization: "Bearer k1", "content-type": "application/json" },
      body: '{"a":1}',
      signal: new AbortController().signal,
      headersTimeoutMs: 5_000,
      bodyTimeoutMs: 5_000,
    });
    expect(response.status).toBe(200);
    expect(await response.body.text()).toBe('{"ok":true}');
    expect(seen.at(-1)).toEqual({ method: "POST", url: "/v1/chat/completions?x=1", authorization: "Bearer k1", body: '{"a":1}' });
  });

  it("sends a path with a space percent-encoded, as the URL parse always did", async () => {
    const response = await sendUpstream({
      url: `${base}/videos/a b`,
      method: "GET",
      headers: {},
      signal: new AbortController().signal,
      headersTimeoutMs: 5_000,
      bodyTimeoutMs: 5_000,
    });
    await response.body.dump();
    expect(seen.at(-1)?.url).toBe("/videos/a%20b");
  });

  it("answers a URL it cannot send to as no response (failover material), without sending", async () => {
    const before = seen.length;
    await expect(
      sendUpstream({ url: "ftp://127.0.0.1/x", method: "GET", headers: {}, signal: new AbortController().signal, headersTimeoutMs: 5_000, bodyTimeoutMs: 5_000 }),
    ).rejects.toBeInstanceOf(NoResponseError);
    expect(seen.length).toBe(before);
  });
});
