// `gateway serve --workers N`: the cluster primary. It migrates the database, creates the server
// secret and bootstraps a first start once, then forks N workers that share the listening socket
// (node:cluster) and each run the whole gateway. The primary serves no request; on PostgreSQL it
// holds no database connection while they run; on SQLite with GATEWAY_SQLITE_SHARED_WRITER=1 it
// keeps one and commits the billing writes of every worker (billing-writer-host.ts, decision 0047). It restarts a worker that exits unexpectedly (with backoff,
// and gives up on a crash loop), forwards SIGHUP as one reload of every worker, and on SIGTERM or
// SIGINT has every worker drain, exiting 0 only when all of them did. Decision 0026.
import cluster, { type Worker } from "node:cluster";
import { bootstrapIfEmpty, type BootstrapResult } from "../accounts/bootstrap.js";
import type { GatewayConfig } from "../config/load.js";
import { resolveServerSecret } from "../config/server-secret.js";
import { PrimaryMetricsAggregator } from "../observability/cluster-metrics.js";
import { openStore } from "../store/index.js";
import type { CliIo } from "./io.js";
import { BILLING_WRITER_VARIABLE, BillingWriterHost, primaryWritesBilling } from "./billing-writer-host.js";
import { printStartBanner, SHUTDOWN_DEADLINE_MS, WORKER_COUNT_VARIABLE, type PrimaryMessage, type ReloadStatus, type WorkerMessage } from "./serve-common.js";

/**
 * More unexpected exits than this within a minute is a crash loop: the gateway stops. Small enough
 * that a worker failing at every start reaches it well within the minute (the delays add up to
 * 7.75 s), or the cap would never trip and the loop would go on at one restart per delay.
 */
export const MAX_RESTARTS_PER_MINUTE = 5;
const FIRST_RESTART_DELAY_MS = 250;
const MAX_RESTART_DELAY_MS = 4_000;
/** How long the primary waits for a worker's reload outcome. */
const RELOAD_ANSWER_MS = 15_000;
/** After the workers' own drain deadline, how long the primary waits before it kills what is left. */
const EXIT_GRACE_MS = 5_000;

/** Restarts within a sliding minute: the delay before the next one doubles with each, and there is a cap. */
export class RestartBudget {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  #restarts: number[] = [];

  constructor(limit = MAX_RESTARTS_PER_MINUTE, windowMs = 60_000, now: () => number = Date.now) {
    this.#limit = limit;
    this.#windowMs = windowMs;
    this.#now = now;
  }

  /** The delay before the next restart (and counts it), or null when the cap is reached. */
  next(): number | null {
    const now = this.#now();
    this.#restarts = this.#restarts.filter((at) => now - at < this.#windowMs);
    if (this.#restarts.length >= this.#limit) return null;
    const delay = Math.min(FIRST_RESTART_DELAY_MS * 2 ** this.#restarts.length, MAX_RESTART_DELAY_MS);
    this.#restarts.push(now);
    return delay;
  }
}

export async function superviseWorkers(config: GatewayConfig, io: CliIo, count: number): Promise<void> {
  // Once, before any worker exists, so that N workers never race on them.
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    sqlitePath: config.sqlitePath,
    secret: resolveServerSecret(config),
    ledgerSecret: config.ledgerSecret,
    ledgerWriter: true,
  });
  let first: BootstrapResult | null;
  let database: string;
  const ownsWrites = primaryWritesBilling(store, io.env);
  try {
    first = await bootstrapIfEmpty(store, config);
    database = store.handle.description;
  } catch (error) {
    await store.close();
    throw error;
  }
  if (!ownsWrites) await store.close();
  const host = ownsWrites ? new BillingWriterHost(store, io) : null;
  try {
    await new Supervisor(io, count, host).run((address) => printStartBanner(io, config, address, `${database}; ${count} workers`, first));
  } finally {
    // After every worker exited: nothing can send a billing write any more.
    if (ownsWrites) await store.close();
  }
}

type Phase = "starting" | "serving" | "stopping";

class Supervisor {
  readonly #io: CliIo;
  readonly #count: number;
  readonly #billingWriter: BillingWriterHost | null;
  readonly #budget = new RestartBudget();
  readonly #live = new Set<Worker>();
  readonly #listening = new Set<Worker>();
  readonly #restartTimers = new Set<NodeJS.Timeout>();
  readonly #answers = new Map<number, (worker: Worker, status: ReloadStatus, text: string) => void>();
  readonly #metrics = new PrimaryMetricsAggregator();
  #phase: Phase = "starting";
  #address = "";
  #reloadSequence = 0;
  #reloading: Promise<void> = Promise.resolve();
  /** Why the gateway exits non-zero (a worker that did not drain, a crash loop, a failed start). */
  readonly #failures: string[] = [];
  #onStarted: (() => void) | undefined;
  #onStopped: (() => void) | undefined;

  constructor(io: CliIo, count: number, billingWriter: BillingWriterHost | null) {
    this.#io = io;
    this.#count = count;
    this.#billingWriter = billingWriter;
  }

  /**
   * Forks the workers, calls onServing once every one listens, and runs until SIGTERM/SIGINT (every
   * worker drained: resolves) or a failure (a worker that exits before listening, a crash loop, a
   * worker that does not drain: rejects). A signal during the start drains what has started.
   */
  async run(onServing: (address: string) => void): Promise<void> {
    const stopped = new Promise<void>((resolve) => (this.#onStopped = resolve));
    const started = new Promise<void>((resolve) => (this.#onStarted = resolve));
    const onMessage = (worker: Worker, message: WorkerMessage) => this.#onMessage(worker, message);
    const onExit = (worker: Worker, code: number | null, signal: string | null) => this.#onExit(worker, code, signal);
    const onHangup = () => void this.#serially(() => this.#reloadAll());
    // Left registered while draining: a second signal (the process group's, a repeated Ctrl-C) changes nothing.
    const onTerminate = (signal: NodeJS.Signals) => {
      if (this.#phase === "stopping") return;
      this.#io.stderr(`${signal}: no new connections; waiting up to ${SHUTDOWN_DEADLINE_MS / 1000}s for requests in flight in ${this.#live.size} workers\n`);
      this.#stop();
    };
    // Structured clone on the IPC channel: the billing writes carry bigints (nano-USD).
    cluster.setupPrimary({ serialization: "advanced" });
    cluster.on("message", onMessage);
    cluster.on("exit", onExit);
    process.on("SIGHUP", onHangup);
    process.on("SIGTERM", onTerminate);
    process.on("SIGINT", onTerminate);
    try {
      for (let i = 0; i < this.#count; i++) this.#fork();
      await Promise.race([started, stopped]);
      if (this.#phase === "serving") onServing(this.#address);
      await stopped;
    } finally {
      cluster.off("message", onMessage);
      cluster.off("exit", onExit);
      process.off("SIGHUP", onHangup);
      process.off("SIGTERM", onTerminate);
      process.off("SIGINT", onTerminate);
    }
    if (this.#failures.length > 0) throw new Error(this.#failures.join("; "));
    this.#io.stderr(`all workers drained\n`);
  }

  #fork(): void {
    // The worker count travels with each worker: the connection cap is shared among them.
    const worker = cluster.fork({ [WORKER_COUNT_VARIABLE]: String(this.#count), ...(this.#billingWriter !== null && { [BILLING_WRITER_VARIABLE]: "primary" }) });
    // A message to a worker that is going away fails asynchronously; without a listener it would end the primary.
    worker.on("error", (error: Error) => this.#io.stderr(`worker ${worker.id}: ${error.message}\n`));
    this.#live.add(worker);
  }

  #onMessage(worker: Worker, message: WorkerMessage): void {
    switch (message?.type) {
      case "billing-writes":
        this.#billingWriter?.onRequests(worker, message);
        break;
      case "listening":
        this.#listening.add(worker);
        this.#address = message.address;
        this.#io.stderr(`worker ${worker.id} (pid ${worker.process.pid}) listening\n`);
        if (this.#phase === "starting" && this.#listening.size === this.#count) {
          this.#phase = "serving";
          this.#onStarted?.();
        }
        break;
      case "reloaded":
        this.#answers.get(message.sequence)?.(worker, message.status, message.text);
        break;
      case "reload-peers":
        void this.#serially(() => this.#reloadPeers(worker, message.version));
        break;
      case "metrics-scrape":
        // The workers that serve (a starting one has no registry yet; a draining one still counts).
        void this.#metrics.scrape(worker, message.id, [...this.#listening]);
        break;
      case "metrics-local":
        this.#metrics.onLocal(worker, message.id, message.metrics);
        break;
    }
  }

  #onExit(worker: Worker, code: number | null, signal: string | null): void {
    this.#live.delete(worker);
    this.#metrics.onExit(worker);
    this.#listening.delete(worker);
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (this.#phase === "stopping") {
      if (signal || code !== 0) this.#failures.push(`worker ${worker.id} exited with ${how} while draining`);
      if (this.#live.size === 0) this.#onStopped?.();
      return;
    }
    if (this.#phase === "starting") {
      this.#failures.push(`worker ${worker.id} exited with ${how} before listening (its error is above)`);
      this.#stop();
      return;
    }
    const delay = this.#budget.next();
    if (delay === null) {
      const message = `worker crash loop: more than ${MAX_RESTARTS_PER_MINUTE} restarts within a minute (the last: worker ${worker.id} exited with ${how}); stopping the gateway`;
      this.#io.stderr(`${message}\n`);
      this.#failures.push(message);
      this.#stop();
      return;
    }
    this.#io.stderr(`worker ${worker.id} (pid ${worker.process.pid}) exited with ${how}; starting a replacement in ${delay} ms\n`);
    const timer = setTimeout(() => {
      this.#restartTimers.delete(timer);
      if (this.#phase === "serving") this.#fork();
    }, delay);
    this.#restartTimers.add(timer);
  }

  /** Every worker drains (SIGTERM); whoever is still there after the drain deadline and a grace period is killed. */
  #stop(): void {
    if (this.#phase === "stopping") return;
    this.#phase = "stopping";
    for (const timer of this.#restartTimers) clearTimeout(timer);
    this.#restartTimers.clear();
    if (this.#live.size === 0) return this.#onStopped?.();
    for (const worker of this.#live) worker.process.kill("SIGTERM");
    const deadline = setTimeout(() => {
      for (const worker of this.#live) {
        this.#failures.push(`worker ${worker.id} had not exited ${(SHUTDOWN_DEADLINE_MS + EXIT_GRACE_MS) / 1000}s after SIGTERM; killed`);
        worker.process.kill("SIGKILL");
      }
    }, SHUTDOWN_DEADLINE_MS + EXIT_GRACE_MS);
    deadline.unref();
  }

  /** One reload at a time, whether from SIGHUP or from the admin API on one worker. */
  #serially(work: () => Promise<void>): Promise<void> {
    const next = this.#reloading.then(work);
    this.#reloading = next.catch(() => undefined);
    return next;
  }

  /** SIGHUP: the first worker reloads and records it in the audit log; the others follow unrecorded. */
  async #reloadAll(): Promise<void> {
    const [recorder, ...followers] = [...this.#listening].sort((a, b) => a.id - b.id);
    if (!recorder || this.#phase !== "serving") return this.#io.stderr("SIGHUP: the workers are not all serving; nothing reloaded\n");
    const recorded = await this.#reload([recorder], true);
    // A reload the audit log could not record does not happen (decision 0021): the others keep theirs.
    const outcomes = recorded[0]![1] === "failed" ? recorded : [...recorded, ...(await this.#reload(followers, false))];
    const texts = new Set(outcomes.map(([, , text]) => text));
    if (texts.size === 1 && outcomes.length === this.#count) this.#io.stderr(`SIGHUP: ${[...texts][0]} (all ${outcomes.length} workers)\n`);
    else for (const [worker, , text] of outcomes) this.#io.stderr(`SIGHUP: worker ${worker.id}: ${text}\n`);
  }

  /** The admin API reloaded one worker (and recorded it): the others read the same file. */
  async #reloadPeers(origin: Worker, version: string): Promise<void> {
    const peers = [...this.#listening].filter((worker) => worker !== origin);
    const outcomes = await this.#reload(peers, false);
    this.#io.stderr(`config reloaded through the admin API by worker ${origin.id} (${version.slice(0, 12)})\n`);
    for (const [worker, , text] of outcomes) this.#io.stderr(`  worker ${worker.id}: ${text}\n`);
  }

  /** Asks each worker to reload; an answer that does not come within RELOAD_ANSWER_MS is reported as such. */
  #reload(workers: Worker[], audit: boolean): Promise<Array<[Worker, ReloadStatus, string]>> {
    const sequence = ++this.#reloadSequence;
    const outcomes = new Map<Worker, [ReloadStatus, string]>();
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.#answers.delete(sequence);
        resolve(workers.map((worker) => [worker, ...(outcomes.get(worker) ?? (["failed", `no answer within ${RELOAD_ANSWER_MS / 1000}s`] as const))]));
      };
      const timer = setTimeout(finish, RELOAD_ANSWER_MS);
      this.#answers.set(sequence, (worker, status, text) => {
        if (!workers.includes(worker) || outcomes.has(worker)) return;
        outcomes.set(worker, [status, text]);
        if (outcomes.size === workers.length) finish();
      });
      if (workers.length === 0) return finish();
      for (const worker of workers) worker.send({ type: "reload", sequence, audit } satisfies PrimaryMessage);
    });
  }
}
