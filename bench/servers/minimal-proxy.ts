// The floor: the smallest Node.js proxy that does what every gateway must (read the request, send it
// to the upstream over a keep-alive pool, pipe the answer back), with none of ours (no auth, no
// parsing, no billing, no log). What it adds over direct is what Node.js, loopback TCP and one more
// process hop cost on this machine; the bench reports it beside our gateway so that the added-latency
// figures can be read against it. Bench-only; not a product path.
// BENCH_FLOOR_PROCESSES=N (N > 1): N such processes behind one port through node:cluster, as
// `gateway serve --workers N` runs: what N processes can gain on this machine at best (the ceiling
// the gateway's own N-worker ratio is read against). The primary answers the stats for all of them.
import cluster from "node:cluster";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Pool } from "undici";

const upstream = process.env.BENCH_MOCK_URL;
if (!upstream) throw new Error("BENCH_MOCK_URL is required");
const processes = Number(process.env.BENCH_FLOOR_PROCESSES ?? "1");
const stop = () => process.exit(0);
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.on("disconnect", stop);

if (processes > 1 && cluster.isPrimary) superviseFloor();
else serveFloor();

function serveFloor(): void {
  const pool = new Pool(upstream!, { connections: 128, keepAliveTimeout: 120_000 });
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
  server.listen(0, "127.0.0.1", () => {
    if (cluster.isPrimary) process.send?.({ type: "ready", port: (server.address() as AddressInfo).port });
  });

  // The same stats IPC as servers/gateway.ts (peak RSS sampled every 50 ms).
  let peakRss = process.memoryUsage.rss();
  setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 50).unref();
  process.on("message", (message: unknown) => {
    const type = (message as { type?: string }).type;
    const memory = process.memoryUsage();
    if (type === "stats") process.send?.({ type: "stats", cpu: process.cpuUsage(), rss: memory.rss, peakRss: (peakRss = Math.max(peakRss, memory.rss)), memory });
    else if (type === "reset-peak") process.send?.({ type: "reset-peak", rss: (peakRss = memory.rss) });
  });
}

/** N proxies on one port; stats: CPU summed, RSS and peak the largest process's. */
function superviseFloor(): void {
  for (let i = 0; i < processes; i++) cluster.fork();
  let listening = 0;
  cluster.on("listening", (_worker, address) => {
    if (++listening === processes) process.send?.({ type: "ready", port: address.port });
  });
  process.on("message", (message: unknown) => {
    const type = (message as { type?: string }).type;
    if (type !== "stats" && type !== "reset-peak") return;
    const workers = Object.values(cluster.workers ?? {}).filter((w) => w?.isConnected());
    const answers: Array<{ cpu: NodeJS.CpuUsage; rss: number; peakRss: number; memory: NodeJS.MemoryUsage }> = [];
    const onMessage = (_worker: unknown, answer: { type?: string }) => {
      if (answer?.type !== type) return;
      answers.push(answer as (typeof answers)[number]);
      if (answers.length < workers.length) return;
      cluster.off("message", onMessage);
      if (type === "reset-peak") return void process.send?.({ type });
      const own = process.cpuUsage();
      const cpu = answers.reduce((sum, a) => ({ user: sum.user + a.cpu.user, system: sum.system + a.cpu.system }), { user: own.user, system: own.system });
      process.send?.({
        type,
        cpu,
        rss: Math.max(...answers.map((a) => a.rss)),
        peakRss: Math.max(...answers.map((a) => a.peakRss)),
        memory: answers[0]!.memory,
      });
    };
    cluster.on("message", onMessage);
    for (const worker of workers) worker!.send({ type });
  });
}
