// How the primary folds the workers' registries, with stand-in workers (no processes): summed work,
// per-worker process series, the holds gauge once; a worker that does not answer in time or that
// has exited keeps its last counters, so the server's counters never go down.
import type { Worker } from "node:cluster";
import { Counter, Gauge, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { parseExposition, seriesOf, valueOf } from "../support/prometheus.js";
import { PrimaryMetricsAggregator, workerRegistryJson, type PrimaryMetricsMessage } from "../../src/observability/cluster-metrics.js";

/** A worker process stand-in: answers collect requests from its own registry unless silenced. */
function fakeWorker(id: number, requests: number, holds: number) {
  const registry = new Registry();
  const counter = new Counter({ name: "gateway_requests_total", help: "h", labelNames: ["route"], registers: [registry] });
  counter.inc({ route: "/v1/chat/completions" }, requests);
  new Gauge({ name: "gateway_holds_outstanding", help: "h", registers: [registry], aggregator: "first" }).set(holds);
  new Gauge({ name: "process_resident_memory_bytes", help: "h", registers: [registry] }).set(1000 * id);
  const state = { answering: true, connected: true, received: [] as PrimaryMetricsMessage[] };
  let aggregator: PrimaryMetricsAggregator | null = null;
  const worker = {
    id,
    isConnected: () => state.connected,
    send(message: PrimaryMetricsMessage) {
      state.received.push(message);
      if (message.type !== "metrics-collect" || !state.answering) return true;
      // Through JSON, as the IPC channel carries it (prom-client hands out its live value objects).
      void workerRegistryJson(registry, id).then((metrics) => aggregator!.onLocal(worker as unknown as Worker, message.id, JSON.parse(JSON.stringify(metrics)) as typeof metrics));
      return true;
    },
  };
  return { worker: worker as unknown as Worker, counter, state, attach: (a: PrimaryMetricsAggregator) => (aggregator = a) };
}

async function scrapeThrough(aggregator: PrimaryMetricsAggregator, requester: ReturnType<typeof fakeWorker>, workers: Array<ReturnType<typeof fakeWorker>>) {
  const before = requester.state.received.length;
  await aggregator.scrape(
    requester.worker,
    7,
    workers.map((w) => w.worker),
  );
  const answer = requester.state.received.slice(before).find((m) => m.type === "metrics-text")!;
  if ("error" in answer) throw new Error(answer.error);
  return parseExposition(answer.text);
}

describe("PrimaryMetricsAggregator", () => {
  it("sums the work, keeps process series per worker and the holds gauge once", async () => {
    const aggregator = new PrimaryMetricsAggregator();
    const a = fakeWorker(1, 5, 3);
    const b = fakeWorker(2, 7, 3);
    for (const w of [a, b]) w.attach(aggregator);
    const f = await scrapeThrough(aggregator, a, [a, b]);
    expect(valueOf(f, "gateway_requests_total", { route: "/v1/chat/completions" })).toBe(12);
    expect(seriesOf(f, "gateway_requests_total")).toEqual([{ route: "/v1/chat/completions" }]);
    expect(seriesOf(f, "process_resident_memory_bytes")).toEqual([{ worker: "1" }, { worker: "2" }]);
    expect(valueOf(f, "process_resident_memory_bytes", { worker: "2" })).toBe(2000);
    expect(valueOf(f, "gateway_holds_outstanding")).toBe(3);
    expect(valueOf(f, "gateway_workers_reporting")).toBe(2);
  });

  it("counts a silent or exited worker with the counters it last reported", { timeout: 10_000 }, async () => {
    const aggregator = new PrimaryMetricsAggregator();
    const a = fakeWorker(1, 5, 0);
    const b = fakeWorker(2, 7, 0);
    for (const w of [a, b]) w.attach(aggregator);
    expect(valueOf(await scrapeThrough(aggregator, a, [a, b]), "gateway_requests_total")).toBe(12);

    // b stops answering (busy, stuck): its last counters stand in, after the collect timeout.
    b.state.answering = false;
    b.counter.inc({ route: "/v1/chat/completions" }, 100);
    a.counter.inc({ route: "/v1/chat/completions" }, 1);
    const late = await scrapeThrough(aggregator, a, [a, b]);
    expect(valueOf(late, "gateway_requests_total")).toBe(13);
    expect(valueOf(late, "gateway_workers_reporting")).toBe(1);
    expect(seriesOf(late, "process_resident_memory_bytes")).toEqual([{ worker: "1" }]);

    // b exits: what it last reported stays in the sum; a replacement starts from zero.
    aggregator.onExit(b.worker);
    const c = fakeWorker(3, 2, 0);
    c.attach(aggregator);
    const after = await scrapeThrough(aggregator, a, [a, c]);
    expect(valueOf(after, "gateway_requests_total")).toBe(6 + 7 + 2);
    expect(valueOf(after, "gateway_workers_reporting")).toBe(2);

    // Many restarts: the exited workers' counters are folded into one, still all counted.
    for (let id = 4; id < 10; id++) {
      const short = fakeWorker(id, 10, 0);
      short.attach(aggregator);
      await scrapeThrough(aggregator, a, [a, short]);
      aggregator.onExit(short.worker);
    }
    for (let i = 0; i < 2; i++) expect(valueOf(await scrapeThrough(aggregator, a, [a, c]), "gateway_requests_total")).toBe(6 + 7 + 2 + 60);
  });
});
