// The mock OpenAI-compatible upstream, in its own process on 127.0.0.1 (random port, sent to the
// parent over IPC). POST .../chat/completions answers a small fixed completion, or, when the body
// asks for a stream, about 10 SSE chunks (role, 8 content pieces, finish, usage when asked, [DONE]),
// each written in its own event-loop turn. BENCH_MOCK_LATENCY_MS adds a fixed delay before the answer.
// For the soak (bench/soak.ts): a key containing "fail" gets 429 (failover to the next key), the
// upstream model "upstream-error" a 500, and "upstream-slow" a stream paced 40 ms a frame.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const latencyMs = Number(process.env.BENCH_MOCK_LATENCY_MS ?? "0");

const COMPLETION = Buffer.from(
  JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "upstream-gpt",
    choices: [{ index: 0, message: { role: "assistant", content: "Hello! This is a short benchmark answer." }, finish_reason: "stop", logprobs: null }],
    usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 },
  }),
);

const base = { id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1_700_000_000, model: "upstream-gpt" };
const frame = (obj: object) => `data: ${JSON.stringify(obj)}\n\n`;
const PIECES = ["Hello", "!", " This", " is", " a", " short", " streamed", " answer."];
const STREAM_FRAMES: string[] = [
  frame({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] }),
  ...PIECES.map((content) => frame({ ...base, choices: [{ index: 0, delta: { content }, finish_reason: null }] })),
  frame({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
];
const USAGE_FRAME = frame({ ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: 8, total_tokens: 20 } });
const DONE = "data: [DONE]\n\n";

let served = 0;

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on("data", (chunk: Buffer) => parts.push(chunk));
  req.on("end", () => {
    served += 1;
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"error":{"message":"not found","type":"invalid_request_error"}}');
      return;
    }
    if (req.headers.authorization?.includes("fail")) {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "1" });
      res.end('{"error":{"message":"rate limited","type":"rate_limit_error"}}');
      return;
    }
    const body = Buffer.concat(parts).toString("utf8");
    if (body.includes('"upstream-error"')) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end('{"error":{"message":"upstream failure","type":"server_error"}}');
      return;
    }
    // Cheap checks instead of JSON.parse: the mock must cost as little CPU as possible.
    const stream = /"stream"\s*:\s*true/.test(body);
    const usage = /"include_usage"\s*:\s*true/.test(body);
    const paceMs = body.includes('"upstream-slow"') ? SLOW_FRAME_MS : 0;
    const answer = () => (stream ? sendStream(res, usage, paceMs) : sendJson(res));
    if (latencyMs > 0) setTimeout(answer, latencyMs);
    else answer();
  });
});

function sendJson(res: import("node:http").ServerResponse): void {
  res.writeHead(200, { "content-type": "application/json", "content-length": String(COMPLETION.length) });
  res.end(COMPLETION);
}

// One frame per event-loop turn, so the frames leave as separate writes (separate TCP segments),
// as a real model's tokens do, instead of one coalesced buffer.
const SLOW_FRAME_MS = 40;

function sendStream(res: import("node:http").ServerResponse, usage: boolean, paceMs: number): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const frames = usage ? [...STREAM_FRAMES, USAGE_FRAME] : STREAM_FRAMES;
  let i = 0;
  const next = () => {
    if (res.destroyed) return;
    if (i < frames.length) {
      res.write(frames[i++]!);
      if (paceMs > 0) setTimeout(next, paceMs);
      else setImmediate(next);
    } else res.end(DONE);
  };
  next();
}

server.keepAliveTimeout = 120_000;
server.headersTimeout = 130_000;
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ type: "ready", port });
});

process.on("message", (message: unknown) => {
  if ((message as { type?: string }).type === "stats") process.send?.({ type: "stats", served, cpu: process.cpuUsage(), rss: process.memoryUsage.rss() });
});
const stop = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1_000).unref();
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
// The parent is gone (IPC closed): never outlive it.
process.on("disconnect", stop);
