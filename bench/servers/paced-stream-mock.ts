// The paced upstream of the open-streams step (bench/streams.ts, issue 43 item 4): an
// OpenAI-compatible POST .../chat/completions that always streams, as a model that trickles tokens:
// the role frame and the first token at once, then one token every BENCH_STREAM_INTERVAL_MS (100),
// as many tokens as the body's max_tokens (600: one minute), then the finish frame, the usage frame
// when stream_options.include_usage is asked, and [DONE]. One interval timer a stream: Node keeps
// timers of one duration in one list, so 10,000 of them cost little more than their writes.
// Bench-only IPC: {type:"stats"} answers CPU, RSS and the event-loop delay (p99 in ms).
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { STREAM_TOKEN } from "../lib/streams/constants.js";

const intervalMs = Number(process.env.BENCH_STREAM_INTERVAL_MS ?? "100");

const base = { id: "chatcmpl-paced", object: "chat.completion.chunk", created: 1_700_000_000, model: "upstream-paced" };
const frame = (obj: object) => `data: ${JSON.stringify(obj)}\n\n`;
const ROLE = frame({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] });
const TOKEN = frame({ ...base, choices: [{ index: 0, delta: { content: STREAM_TOKEN }, finish_reason: null }] });
const FINISH = frame({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
const usageFrame = (tokens: number) => frame({ ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: tokens, total_tokens: 12 + tokens } });
const DONE = "data: [DONE]\n\n";

let open = 0;
let served = 0;

function paced(res: ServerResponse, tokens: number, usage: boolean): void {
  open += 1;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.write(ROLE + TOKEN);
  let sent = 1;
  const finish = () => {
    clearInterval(timer);
    open -= 1;
  };
  const timer = setInterval(() => {
    if (res.destroyed) return finish();
    if (sent < tokens) {
      res.write(TOKEN);
      sent += 1;
      return;
    }
    finish();
    res.end(FINISH + (usage ? usageFrame(tokens) : "") + DONE);
  }, intervalMs);
  res.once("close", () => {
    if (!res.writableFinished) finish();
  });
}

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
    const body = Buffer.concat(parts).toString("utf8");
    // Regular expressions, not JSON.parse: the mock must cost as little CPU as it can.
    const tokens = Math.max(1, Number(/"max_tokens"\s*:\s*(\d+)/.exec(body)?.[1] ?? "600"));
    paced(res, tokens, /"include_usage"\s*:\s*true/.test(body));
  });
});
server.keepAliveTimeout = 120_000;
server.headersTimeout = 130_000;
// The default backlog (511) drops connections when thousands arrive within a second.
server.listen({ port: 0, host: "127.0.0.1", backlog: 65_535 }, () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ type: "ready", port });
});

const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
process.on("message", (message: unknown) => {
  const type = (message as { type?: string }).type;
  if (type === "stats") {
    process.send?.({ type: "stats", served, open, cpu: process.cpuUsage(), rss: process.memoryUsage.rss(), loopDelayP99Ms: loopDelay.percentile(99) / 1e6 });
  } else if (type === "reset") {
    loopDelay.reset();
    process.send?.({ type: "reset" });
  }
});
const stop = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1_000).unref();
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.on("disconnect", stop);
