// GET /metrics under `gateway serve --workers N` (decision 0026): a scrape reports the whole server.
// The worker that receives the scrape (main port or metrics.listen, both shared through cluster) asks
// the primary, which asks every worker for its registry as JSON over the cluster IPC channel, folds
// them with prom-client's AggregatorRegistry.aggregate and hands the text back. How each family folds:
// - work done (every counter and histogram of the gateway): summed, one series set for the server;
// - what describes one process (prom-client's process_* and nodejs_* metrics, and the in-process
//   state a worker keeps for itself: key cooldowns, circuit breakers): one series per worker, under
//   a `worker` label (cluster's worker id, as in the log lines);
// - what is read from the shared database (gateway_holds_outstanding): taken once, never summed.
// The primary keeps each worker's last answer: a worker that exits (or does not answer in time) keeps
// contributing the counters it last reported, so the server's counters never go down across a
// restart (they miss at most what the worker counted after its last scrape).
// prom-client's own cluster support (new AggregatorRegistry + setRegistries) is not used as is: it
// sums every family, has no per-worker label, and installs process-wide listeners on import.
import type { Worker } from "node:cluster";
import type { Registry } from "prom-client";

/**
 * One family as Registry.getMetricsAsJSON returns it (prom-client's own typing of it says `type` is
 * a numeric enum and asks for a collect function; the objects are plain data: a string type, values).
 */
export interface MetricJson {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: Array<{ value: number; labels: Record<string, string | number>; metricName?: string }>;
}
export type MetricsJson = MetricJson[];

/** Worker to primary. */
export type WorkerMetricsMessage =
  /** A scrape arrived at this worker: send it the whole server's exposition. */
  | { type: "metrics-scrape"; id: number }
  /** This worker's registry, as asked by a metrics-collect. */
  | { type: "metrics-local"; id: number; metrics: MetricsJson };

/** Primary to worker. */
export type PrimaryMetricsMessage =
  { type: "metrics-collect"; id: number } | { type: "metrics-text"; id: number; text: string } | { type: "metrics-text"; id: number; error: string };

/** Gateway families that describe the worker's own in-process state (summing them would mean nothing). */
const PER_WORKER_FAMILIES = new Set(["gateway_upstream_keys_cooling_down", "gateway_circuit_breakers"]);

export function isPerWorker(name: string): boolean {
  return name.startsWith("process_") || name.startsWith("nodejs_") || PER_WORKER_FAMILIES.has(name);
}

/** How long the primary waits for the workers' registries; a late worker contributes its last answer. */
export const COLLECT_TIMEOUT_MS = 3_000;
/** How long a worker waits for the primary's exposition before answering the scrape with a 500. */
const SCRAPE_TIMEOUT_MS = 10_000;

/**
 * A worker's registry for the primary: per-worker families get the `worker` label (their label sets
 * then differ between workers, so the aggregation keeps them apart whatever their aggregator says).
 */
export async function workerRegistryJson(registry: Registry, workerId: number): Promise<MetricsJson> {
  const metrics = (await registry.getMetricsAsJSON()) as unknown as MetricsJson;
  const worker = String(workerId);
  return metrics.map((metric) =>
    isPerWorker(metric.name) ? { ...metric, aggregator: "sum", values: metric.values.map((value) => ({ ...value, labels: { ...value.labels, worker } })) } : metric,
  );
}

/** In a worker: asks the primary for the whole server's exposition and answers its collect requests. */
export class WorkerMetricsLink {
  readonly #workerId: number;
  readonly #send: (message: WorkerMetricsMessage) => void;
  readonly #pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  #nextId = 0;
  /** This worker's registry, once the app is built (a collect before that answers nothing). */
  registry: Registry | null = null;

  constructor(workerId: number, send: (message: WorkerMetricsMessage) => void) {
    this.#workerId = workerId;
    this.#send = send;
  }

  /** The exposition of every worker together (GatewayMetrics.expose in a worker). */
  exposeAll(): Promise<string> {
    const id = ++this.#nextId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`the cluster primary did not answer a metrics scrape within ${SCRAPE_TIMEOUT_MS / 1000}s`));
      }, SCRAPE_TIMEOUT_MS);
      this.#pending.set(id, { resolve, reject, timer });
      try {
        this.#send({ type: "metrics-scrape", id });
      } catch (error) {
        clearTimeout(timer);
        this.#pending.delete(id);
        reject(error);
      }
    });
  }

  /** Handles the primary's metrics messages; false for any other message. */
  onMessage(message: PrimaryMetricsMessage | { type?: unknown }): boolean {
    if (message.type === "metrics-collect") {
      const { id } = message as { id: number };
      const registry = this.registry;
      if (registry === null) {
        this.#send({ type: "metrics-local", id, metrics: [] });
        return true;
      }
      void workerRegistryJson(registry, this.#workerId).then(
        (metrics) => this.#send({ type: "metrics-local", id, metrics }),
        () => undefined, // the primary then uses this worker's last answer
      );
      return true;
    }
    if (message.type === "metrics-text") {
      const answer = message as PrimaryMetricsMessage & { type: "metrics-text" };
      const pending = this.#pending.get(answer.id);
      if (!pending) return true;
      this.#pending.delete(answer.id);
      clearTimeout(pending.timer);
      if ("error" in answer) pending.reject(new Error(answer.error));
      else pending.resolve(answer.text);
      return true;
    }
    return false;
  }
}

type AggregateFn = (metrics: MetricsJson[]) => Registry;

/** The families a worker's last answer keeps contributing once it is gone: the summed counters and histograms. */
function cumulativeOnly(metrics: MetricsJson): MetricsJson {
  return metrics.filter((metric) => (metric.type === "counter" || metric.type === "histogram") && metric.aggregator === "sum" && !isPerWorker(metric.name));
}

/** In the primary: one scrape at a time per request, over the workers that serve. */
export class PrimaryMetricsAggregator {
  readonly #last = new Map<Worker, MetricsJson>();
  readonly #collecting = new Map<number, { answers: Map<Worker, MetricsJson>; expected: Set<Worker>; done: () => void }>();
  /** The counters and histograms of workers that have exited, as they last reported them (folded now and then). */
  #retired: MetricsJson[] = [];
  #folding = false;
  #nextId = 0;
  #aggregate: AggregateFn | null = null;

  /** A worker asked for the whole server's exposition (a scrape reached it). */
  async scrape(requester: Worker, requestId: number, workers: Worker[]): Promise<void> {
    try {
      this.#reply(requester, { type: "metrics-text", id: requestId, text: await this.#collect(workers) });
    } catch (error) {
      this.#reply(requester, { type: "metrics-text", id: requestId, error: (error as Error).message });
    }
  }

  /** A worker's registry (a metrics-local message). */
  onLocal(worker: Worker, id: number, metrics: MetricsJson): void {
    this.#last.set(worker, metrics);
    const collecting = this.#collecting.get(id);
    if (!collecting || !collecting.expected.has(worker)) return;
    collecting.answers.set(worker, metrics);
    if (collecting.answers.size === collecting.expected.size) collecting.done();
  }

  /** A worker exited: what it last reported stays counted (synchronously: no scrape can miss it). */
  onExit(worker: Worker): void {
    const last = this.#last.get(worker);
    this.#last.delete(worker);
    if (last) this.#retired.push(cumulativeOnly(last));
  }

  /** The exposition of every worker (same content type as a single process's). */
  async #collect(workers: Worker[]): Promise<string> {
    const aggregate = await this.#aggregator();
    const id = ++this.#nextId;
    const expected = new Set(workers.filter((worker) => worker.isConnected()));
    const answers = new Map<Worker, MetricsJson>();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(finish, COLLECT_TIMEOUT_MS);
      function finish() {
        clearTimeout(timer);
        resolve();
      }
      this.#collecting.set(id, { answers, expected, done: finish });
      if (expected.size === 0) return finish();
      for (const worker of expected) {
        try {
          worker.send({ type: "metrics-collect", id } satisfies PrimaryMetricsMessage);
        } catch {
          // Gone between the check and the send: its last answer stands in below.
        }
      }
    });
    this.#collecting.delete(id);
    const parts: MetricsJson[] = [...this.#retired];
    for (const worker of expected) {
      const answer = answers.get(worker);
      if (answer) parts.push(answer);
      else {
        const last = this.#last.get(worker);
        if (last) parts.push(cumulativeOnly(last));
      }
    }
    parts.push([
      {
        name: "gateway_workers_reporting",
        help: "Workers whose metrics this scrape includes as they are now (a worker that did not answer in time counts with the counters it last reported).",
        type: "gauge",
        aggregator: "first",
        values: [{ labels: {}, value: answers.size }],
      },
    ]);
    const text = await aggregate(parts).metrics();
    await this.#foldRetired(aggregate);
    return text;
  }

  /** Many restarts: the exited workers' answers become one (those pushed meanwhile stay after it). */
  async #foldRetired(aggregate: AggregateFn): Promise<void> {
    const folded = this.#retired.length;
    if (folded <= 4 || this.#folding) return;
    this.#folding = true;
    try {
      const one = (await aggregate(this.#retired.slice(0, folded)).getMetricsAsJSON()) as unknown as MetricsJson;
      this.#retired = [one, ...this.#retired.slice(folded)];
    } finally {
      this.#folding = false;
    }
  }

  #reply(worker: Worker, message: PrimaryMetricsMessage): void {
    if (!worker.isConnected()) return;
    try {
      worker.send(message);
    } catch {
      // The worker went away; its scrape fails with it.
    }
  }

  /** prom-client is loaded by the primary only once a scrape needs it. */
  async #aggregator(): Promise<AggregateFn> {
    if (this.#aggregate === null) {
      // Its default export (module.exports): the bundled gateway (decision 0034) gives a CommonJS
      // package loaded by import() no named exports.
      const { AggregatorRegistry } = (await import("prom-client")).default;
      this.#aggregate = (metrics) => AggregatorRegistry.aggregate(metrics);
    }
    return this.#aggregate;
  }
}
