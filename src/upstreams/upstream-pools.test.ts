// The provider pools of upstream-pools.ts: against an HTTP/2 TLS server (self-signed, trusted through
// the pools' CA hook), many concurrent POSTs share one connection as streams, beyond the HTTP/1.1
// pool size; against an HTTP/1.1 server, a pool of max_connections holds the rest waiting, counted.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import { createSecureServer, type Http2SecureServer, type ServerHttp2Session } from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderConfig } from "../core/catalog.js";
import { ConnectionWaitTimeoutError, NoResponseError, sendToProvider } from "./upstream-client.js";
import { trustUpstreamCa, upstreamRequestsWaiting } from "./upstream-pools.js";

const CONCURRENT = 20;

function provider(name: string, baseUrl: string, settings: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    name,
    type: "openai",
    baseUrl,
    sharedKeys: [],
    apis: new Set(),
    headers: {},
    timeoutMs: 10_000,
    connectTimeoutMs: 5_000,
    maxConnections: 2,
    connectionWaitMs: 10_000,
    http2: true,
    ...settings,
  };
}

const post = (p: ProviderConfig, path: string) =>
  sendToProvider(p, { url: `${p.baseUrl}${path}`, method: "POST", headers: { "content-type": "application/json" }, body: '{"x":1}' }, new AbortController().signal);

/** A self-signed certificate for 127.0.0.1, made with openssl for this run. */
function selfSigned(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), "h2-cert-"));
  try {
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"].concat([
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ]),
      { stdio: "ignore" },
    );
    return { key: readFileSync(join(dir, "key.pem"), "utf8"), cert: readFileSync(join(dir, "cert.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("HTTP/2 upstream", () => {
  let server: Http2SecureServer;
  let base = "";
  const sessions: ServerHttp2Session[] = [];
  let open = 0;
  let peak = 0;
  const held: Array<() => void> = [];

  beforeAll(async () => {
    const { key, cert } = selfSigned();
    trustUpstreamCa(cert);
    server = createSecureServer({ key, cert, allowHTTP1: true, settings: { maxConcurrentStreams: 1000 } });
    server.on("session", (session) => sessions.push(session));
    server.on("request", (req, res) => {
      req.resume();
      open += 1;
      peak = Math.max(peak, open);
      const answer = () => {
        open -= 1;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ version: req.httpVersion }));
      };
      held.push(answer);
      // Held until every request is open at once: they can only all be open as streams of one connection.
      if (held.length === CONCURRENT) for (const release of held.splice(0)) release();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    trustUpstreamCa(null);
    for (const session of sessions) session.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("carries many concurrent requests as streams of its connections, beyond max_connections", async () => {
    const h2 = provider("h2-upstream", base, { maxConnections: 2 });
    const round = async () => {
      peak = 0;
      const responses = await Promise.all(Array.from({ length: CONCURRENT }, () => post(h2, "/v1/chat/completions")));
      const bodies = await Promise.all(responses.map(async (r) => [r.status, JSON.parse(await r.body.text()) as { version: string }] as const));
      expect(bodies.every(([status, body]) => status === 200 && body.version === "2.0")).toBe(true);
      // All open at once: 20 requests on at most 2 connections (HTTP/1.1 would have held 18 waiting).
      expect(peak).toBe(CONCURRENT);
    };
    await round();
    const opened = sessions.length;
    expect(opened).toBeGreaterThanOrEqual(1);
    expect(opened).toBeLessThanOrEqual(2);
    // The next burst reuses them: no new connection.
    await round();
    expect(sessions).toHaveLength(opened);
    expect(upstreamRequestsWaiting().get("h2-upstream")).toBe(0);
  });
});

describe("HTTP/1.1 upstream", () => {
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    req.resume();
    held.push(res);
  });
  let base = "";
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const until = async (condition: () => boolean) => {
    for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(condition()).toBe(true);
  };

  it("opens max_connections, counts the third request as waiting, and sends it when a connection frees", async () => {
    const h1 = provider("h1-upstream", base, { maxConnections: 2 });
    const answers = [post(h1, "/a"), post(h1, "/b"), post(h1, "/c")];
    await until(() => held.length === 2 && upstreamRequestsWaiting().get("h1-upstream") === 1);
    held.shift()!.end("one");
    await until(() => held.length === 2 && upstreamRequestsWaiting().get("h1-upstream") === 0);
    for (const res of held.splice(0)) res.end("more");
    expect((await Promise.all(answers)).map((r) => r.status)).toEqual([200, 200, 200]);
  });

  it("a reloaded provider with other settings gets a new pool; requests of the older snapshot keep theirs", async () => {
    const before = provider("h1-reloaded", base, { maxConnections: 1 });
    const first = post(before, "/one");
    await until(() => held.length === 1);
    const stale = post(before, "/stale");
    await until(() => upstreamRequestsWaiting().get("h1-reloaded") === 1);
    // The catalog reloads: the same provider, now with 2 connections. Its request goes out at once.
    const after = provider("h1-reloaded", base, { maxConnections: 2 });
    const fresh = post(after, "/fresh");
    await until(() => held.length === 2);
    expect(upstreamRequestsWaiting().get("h1-reloaded")).toBe(1);
    for (const res of held.splice(0)) res.end("ok");
    await until(() => held.length === 1);
    held.shift()!.end("ok");
    expect((await Promise.all([first, stale, fresh])).map((r) => r.status)).toEqual([200, 200, 200]);
    expect(upstreamRequestsWaiting().get("h1-reloaded")).toBe(0);
  });

  it("fails a request that waits longer than connection_wait_ms, and sends nothing for it", async () => {
    const h1 = provider("h1-short-wait", base, { maxConnections: 1, connectionWaitMs: 200 });
    const first = post(h1, "/held");
    await until(() => held.length === 1);
    const started = Date.now();
    await expect(post(h1, "/late")).rejects.toBeInstanceOf(ConnectionWaitTimeoutError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(upstreamRequestsWaiting().get("h1-short-wait")).toBe(0);
    held.shift()!.end("done");
    expect((await first).status).toBe(200);
    // The timed-out request never reached the upstream, even once the connection was free.
    await new Promise((r) => setTimeout(r, 100));
    expect(held).toHaveLength(0);
  });
});

describe("an upstream that refuses connections", () => {
  it("answers NoResponseError, and the process carries on", async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const refused = provider("refusing-upstream", `http://127.0.0.1:${port}`);
    const error = await post(refused, "/x").then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(NoResponseError);
    expect(error).not.toBeInstanceOf(ConnectionWaitTimeoutError);
    expect(upstreamRequestsWaiting().get("refusing-upstream")).toBe(0);
  });
});
