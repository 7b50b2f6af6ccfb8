// One client process of the open-streams step (bench/streams.ts), driven over IPC: it opens its
// share of the step's streams (stream g of n is due at t0 + ramp·g/n, so the processes interleave),
// each on its own connection (an undici Pool with as many connections as streams: HTTP/1.1 carries
// one stream a connection), and reads them as cheaply as it can: it counts the token's occurrences
// in the raw bytes instead of parsing events, and keeps only the last chunks for [DONE] and the
// in-band cost.
// Reported per process: time to first token of every stream, errors, and what each finished stream
// cost (request id, the usage frame's cost) for the ledger check; its own CPU and event-loop delay
// tell whether the client, not the target, was the bottleneck.
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Pool } from "undici";
import { STREAM_TOKEN } from "../lib/streams/constants.js";

export interface StreamsClientJob {
  type: "run";
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The streams this process opens: global indices g, due at t0 + rampMs·g/total. */
  indices: number[];
  total: number;
  /** Epoch ms of stream 0 (the same clock in every process). */
  t0: number;
  rampMs: number;
  /** Tokens a complete stream carries. */
  tokens: number;
  timeoutMs: number;
}

export interface FinishedStream {
  requestId: string | null;
  /** The in-band usage cost (USD text) of a chat stream's last usage frame; null when absent. */
  cost: string | null;
}

export interface StreamsClientResult {
  type: "result";
  opened: number;
  finished: FinishedStream[];
  /** Milliseconds from sending to the first token, one per stream that saw one. */
  ttftMs: number[];
  errors: number;
  /** Errors by kind (the error's name, or the first word of the client's own description). */
  errorKinds: Record<string, number>;
  /** The first few error descriptions. */
  errorSamples: string[];
  cpuMicros: number;
  loopDelayP99Ms: number;
}

const MARKER = `"content":"${STREAM_TOKEN}"`;
const TAIL_CHUNKS = 8;

function countMarkers(text: string): number {
  let n = 0;
  for (let at = text.indexOf(MARKER); at !== -1; at = text.indexOf(MARKER, at + MARKER.length)) n += 1;
  return n;
}

async function runOne(pool: Pool, job: StreamsClientJob, path: string, onFirstToken: (ms: number) => void): Promise<FinishedStream> {
  const sentAt = performance.now();
  const { statusCode, headers, body } = await pool.request({
    path,
    method: "POST",
    headers: job.headers,
    body: job.body,
    signal: AbortSignal.timeout(job.timeoutMs),
    // The step's streams idle 100 ms between tokens; undici's 300 s default would do, but say it.
    bodyTimeout: job.timeoutMs,
    headersTimeout: job.timeoutMs,
  });
  const requestId = typeof headers["x-request-id"] === "string" ? headers["x-request-id"] : null;
  if (statusCode !== 200) {
    const text = await body.text();
    throw new Error(`status ${statusCode}: ${text.slice(0, 200)}`);
  }
  let tokens = 0;
  let carry = "";
  // The last chunks, enough for the finish, usage and [DONE] frames: joined once, at the end.
  const tail: string[] = [];
  await new Promise<void>((resolve, reject) => {
    body.on("data", (chunk: Buffer) => {
      const raw = chunk.toString("latin1");
      const text = carry + raw;
      const found = countMarkers(text);
      if (found > 0 && tokens === 0) onFirstToken(performance.now() - sentAt);
      tokens += found;
      carry = text.slice(-(MARKER.length - 1));
      tail.push(raw);
      if (tail.length > TAIL_CHUNKS) tail.shift();
    });
    body.once("end", resolve);
    body.once("error", reject);
  });
  const last = tail.join("");
  if (tokens !== job.tokens) throw new Error(`incomplete: ${tokens} of ${job.tokens} tokens`);
  if (!last.includes("data: [DONE]")) throw new Error("no [DONE] at the end");
  const costs = [...last.matchAll(/"cost":"([0-9.]+)"/g)];
  return { requestId, cost: costs.at(-1)?.[1] ?? null };
}

async function run(job: StreamsClientJob): Promise<StreamsClientResult> {
  const url = new URL(job.url);
  // undici's 10 s connect timeout would count a loaded target's slow accept as the client's error:
  // the client waits as long for the connection as for the whole stream.
  const pool = new Pool(url.origin, { connections: job.indices.length, pipelining: 1, keepAliveTimeout: 120_000, connect: { timeout: job.timeoutMs } });
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const cpuBefore = process.cpuUsage();
  const finished: FinishedStream[] = [];
  const ttftMs: number[] = [];
  const errorSamples: string[] = [];
  let errors = 0;
  const errorKinds: Record<string, number> = {};
  const streams = job.indices.map(async (g) => {
    const wait = job.t0 + (job.rampMs * g) / job.total - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    try {
      finished.push(await runOne(pool, job, url.pathname, (ms) => ttftMs.push(ms)));
    } catch (error) {
      errors += 1;
      const kind = error instanceof Error ? (error.name === "Error" ? (error.message.split(/[\s:]/)[0] ?? "Error") : error.name) : "unknown";
      errorKinds[kind] = (errorKinds[kind] ?? 0) + 1;
      if (errorSamples.length < 5) errorSamples.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
    }
  });
  await Promise.all(streams);
  const cpu = process.cpuUsage(cpuBefore);
  loopDelay.disable();
  await pool.close();
  return {
    type: "result",
    opened: job.indices.length,
    finished,
    ttftMs,
    errors,
    errorKinds,
    errorSamples,
    cpuMicros: cpu.user + cpu.system,
    loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
  };
}

process.on("message", (message: unknown) => {
  const job = message as StreamsClientJob;
  if (job?.type !== "run") return;
  void run(job).then(
    (result) => process.send?.(result),
    (error: unknown) => process.send?.({ type: "failed", message: String(error) }),
  );
});
process.on("disconnect", () => process.exit(0));
process.send?.({ type: "ready" });
