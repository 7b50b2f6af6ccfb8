// The floor: the smallest Node.js proxy that does what every gateway must (read the request, send it
// to the upstream over a keep-alive pool, pipe the answer back), with none of ours (no auth, no
// parsing, no billing, no log). What it adds over direct is what Node.js, loopback TCP and one more
// process hop cost on this machine; the bench reports it beside our gateway so that the added-latency
// figures can be read against it. Bench-only; not a product path.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Pool } from "undici";

const upstream = process.env.BENCH_MOCK_URL;
if (!upstream) throw new Error("BENCH_MOCK_URL is required");
const pool = new Pool(upstream, { connections: 128, keepAliveTimeout: 120_000 });

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on("data", (chunk: Buffer) => parts.push(chunk));
  req.on("end", () => {
    pool
      .request({ path: req.url ?? "/", method: "POST", headers: { "content-type": "application/json" }, body: Buffer.concat(parts) })
      .then(({ statusCode, headers, body }) => {
        res.writeHead(statusCode, { "content-type": String(headers["content-type"] ?? "application/json") });
        body.pipe(res);
      })
      .catch(() => {
        res.writeHead(502);
        res.end();
      });
  });
});
server.keepAliveTimeout = 120_000;
server.listen(0, "127.0.0.1", () => process.send?.({ type: "ready", port: (server.address() as AddressInfo).port }));

// The same stats IPC as servers/gateway.ts (peak RSS sampled every 50 ms).
let peakRss = process.memoryUsage.rss();
setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 50).unref();
process.on("message", (message: unknown) => {
  const type = (message as { type?: string }).type;
  const memory = process.memoryUsage();
  if (type === "stats") process.send?.({ type: "stats", cpu: process.cpuUsage(), rss: memory.rss, peakRss: (peakRss = Math.max(peakRss, memory.rss)), memory });
  else if (type === "reset-peak") process.send?.({ type: "reset-peak", rss: (peakRss = memory.rss) });
});
const stop = () => process.exit(0);
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.on("disconnect", stop);
