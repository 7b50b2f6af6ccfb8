// The open-streams step (issue 43, item 4): N concurrent streaming chat requests, each one token
// every 100 ms for 60 s from the paced mock, opened over a ramp by several client processes, through
// each target in turn (direct to the mock, our gateway with one process, Portkey's gateway). Per
// target: RSS at idle (after a warm-up) and while every stream is open, the event-loop delay over the
// ramp and the plateau, time to first token, errors, and for ours the ledger against the client's
// own record of what each finished stream was told it cost. Every process is stopped at the end.
import type { StreamsClientJob, StreamsClientResult, FinishedStream } from "../../load/streams-client.js";
import { sleep, stopChild, waitForMessage, type Child } from "../procs.js";
import { forkChild, isType } from "../servers.js";
import { sampleProcessTree, type ProcessSample } from "../soak/sampler.js";
import { median, summarize, type Summary } from "../stats.js";
import { checkStreamBooks, type StreamBooks } from "./books.js";
import { streamsBody } from "./constants.js";
import { raiseFileLimit, type FileLimit } from "./file-limits.js";
import { directTarget, peerInstalled, startOurs, startPeer, type StreamsTarget, type StreamsTargetName } from "./targets.js";

const MOCK_SCRIPT = new URL("../../servers/paced-stream-mock.ts", import.meta.url).pathname;
const CLIENT_SCRIPT = new URL("../../load/streams-client.ts", import.meta.url).pathname;

export interface StreamsOptions {
  streams: number;
  /** How long each stream lasts: seconds × 1000 / intervalMs tokens. */
  seconds: number;
  intervalMs: number;
  /** The streams are opened evenly over this time (all open from its end until the first ends). */
  rampSeconds: number;
  clients: number;
  targets: StreamsTargetName[];
  log?: (line: string) => void;
}

export interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
}

export interface TargetRun {
  target: StreamsTargetName;
  opened: number;
  finished: number;
  errors: number;
  errorKinds: Record<string, number>;
  errorSamples: string[];
  /** Milliseconds from sending to the first token. */
  ttftMs: Summary;
  idleRssMiB: number;
  /** The median RSS while every stream was open, and the highest seen. */
  plateauRssMiB: number;
  peakRssMiB: number;
  /** Streams the mock had open at the plateau's samples (median): N unless the clients fell behind. */
  openAtPlateau: number;
  /** The median over the plateau's samples of (RSS − idle) / streams open then. */
  perStreamKiB: number;
  peakFds: number;
  /** Over the ramp and the plateau (until just before the first stream ends); and to the end. */
  loopDelayMs: LoopDelay | null;
  loopDelayToEndMs: LoopDelay | null;
  targetCpuSeconds: number | null;
  clientCpuSeconds: number;
  clientLoopDelayP99Ms: number;
  mockLoopDelayP99Ms: number;
  wallSeconds: number;
  books: StreamBooks | null;
}

export interface StreamsResult {
  startedAt: string;
  options: Omit<StreamsOptions, "log">;
  tokensPerStream: number;
  fileLimits: Record<string, FileLimit>;
  runs: TargetRun[];
  skipped: string[];
}

interface ProbeStats {
  type: "probe-stats";
  cpu: NodeJS.CpuUsage;
  rss: number;
  loopDelayMs: LoopDelay;
}

interface MockStats {
  type: "stats";
  open: number;
  loopDelayP99Ms: number;
}

/** Descriptors a process needs for `streams` sockets, with room for everything else it opens. */
const fdsFor = (sockets: number) => sockets + 1024;

async function probe(child: Child): Promise<ProbeStats> {
  const answer = waitForMessage(child, isType<ProbeStats>("probe-stats"), 60_000);
  child.proc.send({ type: "probe-stats" });
  return answer;
}

async function runClients(clients: Child[], job: Omit<StreamsClientJob, "indices">, timeoutMs: number): Promise<StreamsClientResult[]> {
  return Promise.all(
    clients.map((client, k) => {
      const indices: number[] = [];
      for (let g = k; g < job.total; g += clients.length) indices.push(g);
      const answer = waitForMessage(client, isType<StreamsClientResult>("result"), timeoutMs);
      client.proc.send({ ...job, indices } satisfies StreamsClientJob);
      return answer;
    }),
  );
}

async function mockStats(mock: Child): Promise<MockStats> {
  const answer = waitForMessage(mock, isType<MockStats>("stats"), 60_000);
  mock.proc.send({ type: "stats" });
  return answer;
}

/**
 * RSS and fds of the target (or of the mock, for direct) from /proc, with the streams the mock has
 * open at that moment (`inFlight`): on a loaded host the clients may not have all N open at once.
 */
function rssSampler(pid: number, mock: Child, t0: number): { samples: ProcessSample[]; take: () => void } {
  const samples: ProcessSample[] = [];
  let busy = false;
  const take = () => {
    if (busy) return;
    busy = true;
    const s = sampleProcessTree(pid, (Date.now() - t0) / 1000);
    void mockStats(mock)
      .then((m) => {
        if (s) samples.push({ ...s, inFlight: m.open });
      })
      .catch(() => undefined)
      .finally(() => (busy = false));
  };
  return { samples, take };
}

async function measureTarget(target: StreamsTarget, mock: Child, clients: Child[], options: StreamsOptions, tokens: number, log: (line: string) => void): Promise<TargetRun> {
  const body = streamsBody(tokens);
  const warmBody = streamsBody(3);
  const pid = target.child?.proc.pid ?? mock.proc.pid!;
  const streamMs = options.seconds * 1000;
  const rampMs = options.rampSeconds * 1000;
  const clientTimeoutMs = streamMs + rampMs + 120_000;

  // Warm-up: compiled code paths, pools and caches, so that idle is the working idle.
  const warmStreams = Math.min(100, options.streams);
  const warm = await runClients(
    clients,
    { type: "run", url: target.url, headers: target.headers, body: warmBody, total: warmStreams, t0: Date.now(), rampMs: 0, tokens: 3, timeoutMs: 60_000 },
    120_000,
  );
  const warmFinished = warm.flatMap((r) => r.finished);
  await sleep(2_000);
  const idle: number[] = [];
  for (let i = 0; i < 3; i++) {
    idle.push(sampleProcessTree(pid, 0)?.rssMiB ?? Number.NaN);
    await sleep(500);
  }

  if (target.child) {
    const reset = waitForMessage(target.child, isType("probe-reset"), 60_000);
    target.child.proc.send({ type: "probe-reset" });
    await reset;
  }
  const mockReset = waitForMessage(mock, isType("reset"), 60_000);
  mock.proc.send({ type: "reset" });
  await mockReset;
  const cpuBefore = target.child ? (await probe(target.child)).cpu : null;

  const t0 = Date.now() + 500;
  const sampler = rssSampler(pid, mock, t0);
  const everyMs = Math.max(100, Math.min(1000, Math.round(streamMs / 30)));
  const timer = setInterval(sampler.take, everyMs);
  // Just before the first stream ends: the delay over the ramp and the plateau, settlements excluded.
  const plateauEnd = t0 + streamMs - Math.min(1000, options.intervalMs * 2);
  let loopDelayMs: LoopDelay | null = null;
  const plateauProbe = (async () => {
    await sleep(plateauEnd - Date.now());
    if (target.child) loopDelayMs = (await probe(target.child)).loopDelayMs;
  })();
  let lastLog = 0;
  const progress = setInterval(() => {
    const s = sampler.samples.at(-1);
    if (s && Date.now() - lastLog >= 10_000) {
      lastLog = Date.now();
      log(`streams: ${target.name} t=${s.t.toFixed(0)} s, RSS ${s.rssMiB.toFixed(1)} MiB, fds ${s.fds}`);
    }
  }, 1000);
  const started = Date.now();
  let results: StreamsClientResult[];
  try {
    results = await runClients(
      clients,
      { type: "run", url: target.url, headers: target.headers, body, total: options.streams, t0, rampMs, tokens, timeoutMs: clientTimeoutMs },
      clientTimeoutMs + 30_000,
    );
  } finally {
    clearInterval(timer);
    clearInterval(progress);
  }
  await plateauProbe;
  const wallSeconds = (Date.now() - started) / 1000;
  const end = target.child ? await probe(target.child) : null;
  const mockEnd = await mockStats(mock);

  // The plateau: from the end of the ramp (plus a second) until the first stream ends.
  const from = (rampMs + Math.min(1000, (streamMs - rampMs) / 4)) / 1000;
  const to = (plateauEnd - t0) / 1000;
  const plateau = sampler.samples.filter((s) => s.t >= from && s.t <= to && (s.inFlight ?? 0) > 0);
  const idleRssMiB = median(idle);
  const plateauRssMiB = median(plateau.map((s) => s.rssMiB));
  const peakRssMiB = Math.max(...sampler.samples.map((s) => s.rssMiB));
  const finished: FinishedStream[] = results.flatMap((r) => r.finished);
  const books = target.books ? await checkStreamBooks(target.books.store, target.books.accountId, [...warmFinished, ...finished]) : null;
  const cpuAfter = end?.cpu;
  return {
    target: target.name,
    opened: results.reduce((n, r) => n + r.opened, 0),
    finished: finished.length,
    errors: results.reduce((n, r) => n + r.errors, 0),
    errorKinds: results.reduce<Record<string, number>>((all, r) => {
      for (const [kind, n] of Object.entries(r.errorKinds)) all[kind] = (all[kind] ?? 0) + n;
      return all;
    }, {}),
    errorSamples: results.flatMap((r) => r.errorSamples).slice(0, 3),
    ttftMs: summarize(results.flatMap((r) => r.ttftMs)),
    idleRssMiB,
    plateauRssMiB,
    peakRssMiB,
    openAtPlateau: median(plateau.map((s) => s.inFlight ?? 0)),
    perStreamKiB: median(plateau.map((s) => ((s.rssMiB - idleRssMiB) * 1024) / (s.inFlight ?? 1))),
    peakFds: Math.max(...sampler.samples.map((s) => s.fds)),
    loopDelayMs,
    loopDelayToEndMs: end?.loopDelayMs ?? null,
    targetCpuSeconds: cpuBefore && cpuAfter ? (cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system) / 1e6 : null,
    clientCpuSeconds: results.reduce((n, r) => n + r.cpuMicros, 0) / 1e6,
    clientLoopDelayP99Ms: Math.max(...results.map((r) => r.loopDelayP99Ms)),
    mockLoopDelayP99Ms: mockEnd.loopDelayP99Ms,
    wallSeconds,
    books,
  };
}

export async function runStreams(options: StreamsOptions): Promise<StreamsResult> {
  const log = options.log ?? (() => undefined);
  const startedAt = new Date().toISOString();
  const tokens = Math.max(2, Math.round((options.seconds * 1000) / options.intervalMs));
  const perClient = Math.ceil(options.streams / options.clients);
  const fileLimits: Record<string, FileLimit> = { bench: raiseFileLimit(process.pid, fdsFor(options.streams)) };
  const skipped: string[] = [];
  const mock = forkChild("paced-mock", MOCK_SCRIPT, { env: { BENCH_STREAM_INTERVAL_MS: String(options.intervalMs) } });
  const clients: Child[] = [];
  const runs: TargetRun[] = [];
  try {
    // Generous: on a loaded host loading tsx alone can take tens of seconds.
    const { port } = await waitForMessage(mock, isType<{ type: "ready"; port: number }>("ready"), 120_000);
    fileLimits.mock = raiseFileLimit(mock.proc.pid!, fdsFor(options.streams));
    const mockUrl = `http://127.0.0.1:${port}`;
    for (let k = 0; k < options.clients; k++) {
      const client = forkChild(`streams-client-${k}`, CLIENT_SCRIPT, {});
      clients.push(client);
      await waitForMessage(client, isType("ready"), 120_000);
      fileLimits[`client-${k}`] = raiseFileLimit(client.proc.pid!, fdsFor(perClient));
    }
    for (const name of options.targets) {
      if (name === "peer" && !peerInstalled()) {
        skipped.push("peer: @portkey-ai/gateway is not installed");
        continue;
      }
      const target = name === "direct" ? directTarget(mockUrl) : name === "ours" ? await startOurs(mockUrl, options.streams) : await startPeer(mockUrl);
      try {
        // Ours holds a client socket and an upstream socket a stream.
        if (target.child) fileLimits[name] = raiseFileLimit(target.child.proc.pid!, fdsFor(2 * options.streams));
        log(`streams: ${name}, ${options.streams} streams of ${tokens} tokens every ${options.intervalMs} ms, opened over ${options.rampSeconds} s`);
        const run = await measureTarget(target, mock, clients, options, tokens, log);
        runs.push(run);
        log(
          `streams: ${name} done: ${run.finished}/${run.opened} finished, ${run.errors} errors, TTFT p50 ${run.ttftMs.p50.toFixed(1)} ms, ` +
            `${run.perStreamKiB.toFixed(1)} KiB a stream, loop p99 ${run.loopDelayMs?.p99.toFixed(1) ?? "-"} ms`,
        );
      } finally {
        await target.stop();
      }
    }
  } finally {
    for (const client of clients) await stopChild(client, 3_000);
    await stopChild(mock, 3_000);
  }
  const { log: _log, ...shown } = options;
  void _log;
  return { startedAt, options: shown, tokensPerStream: tokens, fileLimits, runs, skipped };
}
