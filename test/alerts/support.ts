// A local webhook receiver (127.0.0.1, random port) for the alerts tests: records every POST with its
// headers and body, and answers with what the test's handler decides (a status, or never).
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  headers: IncomingMessage["headers"];
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** The answer's status, or "hang" to never answer. */
  answer: (received: Received, index: number) => number | "hang";
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const hanging: ServerResponse[] = [];
  const receiver: Receiver = { url: "", received: [], answer: () => 200, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const received = { headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() };
      receiver.received.push(received);
      const answer = receiver.answer(received, receiver.received.length - 1);
      if (answer === "hang") hanging.push(res);
      else res.writeHead(answer, { "content-type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return receiver;
}

/** Checks X-Gateway-Signature as a receiver would: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">. */
export function signatureValid(secret: string, header: string | undefined, body: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? "");
  if (!match) return false;
  const expected = createHmac("sha256", secret).update(`${match[1]}.${body}`).digest();
  return timingSafeEqual(expected, Buffer.from(match[2]!, "hex"));
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The alerts section of a test config: http to 127.0.0.1, short waits, no scheduled work unless asked. */
export function alertsConfig(extra: { maxAttempts?: number; timeoutMs?: number; verifyIntervalS?: number; reports?: boolean } = {}): string {
  return `
alerts:
  allowed_http_hosts: ["127.0.0.1"]
  attempt_timeout_ms: ${extra.timeoutMs ?? 2000}
  max_attempts: ${extra.maxAttempts ?? 3}
  backoff_ms: 50
  poll_ms: 50
  reports: ${extra.reports ?? false}
ledger_verify:
  interval_s: ${extra.verifyIntervalS ?? 0}
`;
}
