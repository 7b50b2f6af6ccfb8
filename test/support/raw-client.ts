// Raw HTTP/1.1 over node:net for tests of the edge, where an HTTP client would hide what a hostile
// client does (slow sending, half-open connections, bodies that never end).
import { request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { expect } from "vitest";
import { sleep } from "./mock-upstream.js";
import type { TestGateway } from "./gateway.js";

export const MIB = 1024 * 1024;

/** A raw connection that records what it receives and when it closes. */
export class RawClient {
  received = Buffer.alloc(0);
  written = 0;
  /** The connection is gone: closed, or reset while the client was still sending. */
  readonly closed: Promise<void>;
  /** The gateway has finished its side (FIN), or the connection is gone. */
  readonly ended: Promise<void>;
  private constructor(readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => (this.received = Buffer.concat([this.received, chunk])));
    socket.on("error", () => undefined);
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
    this.ended = Promise.race([this.closed, new Promise<void>((resolve) => socket.once("end", () => resolve()))]);
  }

  /** allowHalfOpen: keep sending after the gateway has finished its side, as a hostile client would. */
  static open(gatewayUrl: string): Promise<RawClient> {
    const { port } = new URL(gatewayUrl);
    return new Promise((resolve, reject) => {
      const socket = connect({ port: Number(port), host: "127.0.0.1", allowHalfOpen: true }, () => resolve(new RawClient(socket)));
      socket.once("error", reject);
    });
  }

  get isClosed(): boolean {
    return this.socket.destroyed;
  }

  send(data: string | Buffer): void {
    if (!this.socket.writable) return;
    this.written += Buffer.byteLength(data);
    this.socket.write(data);
  }

  /** Sends garbage as fast as the connection takes it, until it closes or `limit` bytes went out. */
  async flood(limit: number): Promise<void> {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    while (this.socket.writable && !this.socket.destroyed && this.written < limit) {
      this.written += chunk.length;
      if (!this.socket.write(chunk)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            this.socket.off("drain", done);
            this.socket.off("close", done);
            resolve();
          };
          this.socket.once("drain", done);
          this.socket.once("close", done);
        });
      }
    }
  }

  /** Sends one byte every `everyMs` until the connection closes (a slowloris client). */
  async trickle(everyMs: number): Promise<void> {
    while (!this.isClosed && this.socket.writable) {
      this.send("a");
      await sleep(everyMs);
    }
  }

  response(): { status: number; headers: Record<string, string>; body: { error: { type: string; param: string | null; code: string; message: string }; request_id: string } } {
    const text = this.received.toString("utf8");
    const end = text.indexOf("\r\n\r\n");
    if (end < 0) throw new Error(`no complete response head in ${JSON.stringify(text.slice(0, 200))}`);
    const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
    const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
    const length = Number(headers["content-length"]);
    return { status: Number(statusLine!.split(" ")[1]), headers, body: JSON.parse(text.slice(end + 4, end + 4 + length)) };
  }
}

export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function expectCatalogued(client: RawClient, status: number, type: string) {
  const response = client.response();
  expect(response.status).toBe(status);
  expect(response.body.error.type).toBe(type);
  expect(response.headers["x-request-id"]).toMatch(/^req_[0-9a-f]{32}$/);
  expect(response.body.request_id).toBe(response.headers["x-request-id"]);
  expect(response.headers.connection).toBe("close");
  return response;
}

/** Open connections on the gateway's side. */
export function openConnections(gateway: TestGateway): Promise<number> {
  return new Promise((resolve, reject) => gateway.app.server.server.getConnections((error, count) => (error ? reject(error) : resolve(count))));
}

export async function waitForNoConnections(gateway: TestGateway, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while ((await openConnections(gateway)) > 0) {
    if (Date.now() > deadline) throw new Error(`the gateway still has ${await openConnections(gateway)} connections after ${ms} ms`);
    await sleep(20);
  }
}

export function deepArray(depth: number): string {
  return `${"[".repeat(depth)}${"]".repeat(depth)}`;
}

export function deepObject(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

/** One request with headers as raw name/value pairs (a name may repeat, as no fetch client sends it). */
export function requestWithRawHeaders(
  url: string,
  method: string,
  headers: Array<[string, string]>,
  body?: string,
): Promise<{ status: number; requestId: string | undefined; body: { error?: { type: string; message: string } } }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode!, requestId: res.headers["x-request-id"] as string | undefined, body: text ? JSON.parse(text) : {} }));
    });
    // A header set to an array goes out as one line per value.
    const values = new Map<string, string[]>();
    for (const [name, value] of headers) values.set(name.toLowerCase(), [...(values.get(name.toLowerCase()) ?? []), value]);
    for (const [name, list] of values) req.setHeader(name, list);
    if (body !== undefined) req.setHeader("content-type", "application/json");
    req.on("error", reject);
    req.end(body);
  });
}
