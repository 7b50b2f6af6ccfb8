// The open-loop, fixed-rate load generator, in its own process, driven by the bench over IPC.
// Request i is due at t0 + i/rate whatever happened to earlier requests (no coordinated omission:
// a slow answer never delays the next send; requests wait in the undici Pool's queue instead and
// that wait is part of their latency). Times are process.hrtime.bigint() (ns), reported in µs.
// Latency runs from the moment the request is handed to the Pool; how late that moment was against
// the schedule (timer granularity, a busy client) is reported separately as `lag`.
// For every request: time to first body byte (TTFB) and to the end of the body (TTLB).
import { Pool } from "undici";
import { summarize, type Summary } from "../lib/stats.js";

export interface OpenLoopJob {
  type: "run";
  id: number;
  url: string;
  headers: Record<string, string>;
  body: string;
  rate: number;
  durationMs: number;
  /** Sent at the same rate before the measured part, and not counted. */
  warmupMs: number;
  connections: number;
  /** Give up waiting for answers this long after the last send. */
  drainTimeoutMs: number;
  /** Substring every 2xx body must contain (checked on the first few answers). */
  expect?: string;
  /**
   * Stop sending when more requests than this are unanswered: the target cannot sustain the rate
   * and the backlog would only grow (the run is then reported as overloaded, not as a latency).
   */
  maxInFlight: number;
}

export interface OpenLoopResult {
  type: "result";
  id: number;
  sent: number;
  measured: number;
  ok: number;
  errors: number;
  non2xx: number;
  timeouts: number;
  badBodies: number;
  /** The target fell behind the schedule (in-flight limit hit): percentiles cover only answered requests. */
  overloaded: boolean;
  firstError?: string;
  achievedRate: number;
  ttfb: Summary;
  ttlb: Summary;
  lag: Summary;
  clientCpuMicros: number;
}

async function run(job: OpenLoopJob): Promise<OpenLoopResult> {
  const url = new URL(job.url);
  const pool = new Pool(url.origin, { connections: job.connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const intervalNs = 1e9 / job.rate;
  const warmupCount = Math.round((job.rate * job.warmupMs) / 1000);
  const total = warmupCount + Math.round((job.rate * job.durationMs) / 1000);
  const measuredCount = total - warmupCount;
  const ttfb = new Float64Array(measuredCount).fill(Number.NaN);
  const ttlb = new Float64Array(measuredCount).fill(Number.NaN);
  const lag = new Float64Array(measuredCount).fill(Number.NaN);
  let sent = 0;
  let settled = 0;
  let ok = 0;
  let errors = 0;
  let non2xx = 0;
  let badBodies = 0;
  let firstError: string | undefined;
  let overloaded = false;
  const cpuBefore = process.cpuUsage();

  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  let target = total;
  const finishOne = () => {
    settled += 1;
    if (settled >= target) resolveDone();
  };

  const fire = (i: number, dueNs: bigint) => {
    const start = process.hrtime.bigint();
    const slot = i - warmupCount;
    if (slot >= 0) lag[slot] = Number(start - dueNs) / 1000;
    let first = 0n;
    pool
      .request({ path: url.pathname, method: "POST", headers: job.headers, body: job.body })
      .then(({ statusCode, body }) => {
        const check = job.expect !== undefined && i < warmupCount + 5 && statusCode < 300;
        let text = "";
        body.on("data", (chunk: Buffer) => {
          if (first === 0n) first = process.hrtime.bigint();
          if (check) text += chunk.toString("utf8");
        });
        body.on("error", (error: Error) => {
          errors += 1;
          firstError ??= `body: ${error.message}`;
          finishOne();
        });
        body.on("end", () => {
          const end = process.hrtime.bigint();
          if (first === 0n) first = end;
          if (statusCode < 200 || statusCode >= 300) {
            non2xx += 1;
            firstError ??= `status ${statusCode}`;
          } else if (check && !text.includes(job.expect!)) {
            badBodies += 1;
            firstError ??= `unexpected body: ${text.slice(0, 200)}`;
          } else {
            ok += 1;
            if (slot >= 0) {
              ttfb[slot] = Number(first - start) / 1000;
              ttlb[slot] = Number(end - start) / 1000;
            }
          }
          finishOne();
        });
      })
      .catch((error: Error) => {
        errors += 1;
        firstError ??= error.message;
        finishOne();
      });
  };

  const t0 = process.hrtime.bigint() + 2_000_000n;
  const dueAt = (i: number) => t0 + BigInt(Math.round(i * intervalNs));
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = process.hrtime.bigint();
      // Everything already due goes out now, each with its own due time (bounded by `total`).
      while (sent < total && dueAt(sent) <= now) {
        if (sent - settled >= job.maxInFlight) {
          overloaded = true;
          break;
        }
        fire(sent, dueAt(sent));
        sent += 1;
      }
      if (sent >= total || overloaded) return resolve();
      const waitMs = Number(dueAt(sent) - process.hrtime.bigint()) / 1e6;
      setTimeout(tick, Math.max(0, Math.floor(waitMs)));
    };
    tick();
  });
  const sendEnd = process.hrtime.bigint();
  target = sent;
  if (settled >= target) resolveDone();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    resolveDone();
  }, job.drainTimeoutMs);
  await done;
  clearTimeout(timer);
  const timeouts = timedOut ? sent - settled : 0;
  await pool.destroy().catch(() => undefined);
  const cpu = process.cpuUsage(cpuBefore);
  const measuredSpanS = Number(sendEnd - dueAt(warmupCount)) / 1e9;
  const measuredSent = Math.max(0, sent - warmupCount);
  return {
    type: "result",
    id: job.id,
    sent,
    measured: measuredSent,
    ok,
    errors,
    non2xx,
    timeouts,
    badBodies,
    overloaded,
    ...(firstError !== undefined && { firstError }),
    achievedRate: measuredSpanS > 0 ? measuredSent / measuredSpanS : 0,
    ttfb: summarize(ttfb),
    ttlb: summarize(ttlb),
    lag: summarize(lag),
    clientCpuMicros: cpu.user + cpu.system,
  };
}

let busy = false;
process.on("message", (message: unknown) => {
  const job = message as OpenLoopJob;
  if (job?.type !== "run") return;
  if (busy) {
    process.send?.({ type: "error", id: job.id, message: "a run is already in progress" });
    return;
  }
  busy = true;
  run(job)
    .then((result) => process.send?.(result))
    .catch((error: Error) => process.send?.({ type: "error", id: job.id, message: error.stack ?? error.message }))
    .finally(() => (busy = false));
});
process.on("disconnect", () => process.exit(0));
process.on("SIGTERM", () => process.exit(0));
process.send?.({ type: "ready" });
