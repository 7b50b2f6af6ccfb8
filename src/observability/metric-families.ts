// The building blocks of metrics.ts's scrape-time families: histogram buckets kept as plain counts,
// and the registry entry prom-client reads a family's values from when scraped.
import type { Registry } from "prom-client";

/** Counts per bucket (not cumulative; the last is +Inf), their sum and count. */
export class Buckets {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }
  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
  }
  add(other: Buckets): void {
    for (let i = 0; i < this.counts.length; i++) this.counts[i]! += other.counts[i]!;
    this.sum += other.sum;
    this.count += other.count;
  }
}

export type Labels = Record<string, string>;
export interface Value {
  labels: Labels;
  value: number;
  metricName?: string;
}

/** A metric family computed when scraped (prom-client's registry takes every object of this shape). */
export function family(registry: Registry, name: string, help: string, type: "counter" | "histogram" | "gauge", values: () => Value[]): void {
  const metric = { name, help, type, aggregator: "sum", get: () => ({ name, help, type, aggregator: "sum", values: values() }) };
  registry.registerMetric(metric as unknown as Parameters<Registry["registerMetric"]>[0]);
}

/** Groups the series by a key, summing what `into` adds. */
export function groupBy<T, A>(items: Iterable<T>, key: (item: T) => string | null, start: (item: T) => A, into: (acc: A, item: T) => void): A[] {
  const groups = new Map<string, A>();
  for (const item of items) {
    const k = key(item);
    if (k === null) continue;
    let acc = groups.get(k);
    if (acc === undefined) groups.set(k, (acc = start(item)));
    into(acc, item);
  }
  return [...groups.values()];
}

export function histogramValues(name: string, labels: Labels, b: Buckets): Value[] {
  const values: Value[] = [];
  let cumulative = 0;
  b.bounds.forEach((bound, i) => {
    cumulative += b.counts[i]!;
    values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: String(bound) }, value: cumulative });
  });
  values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: "+Inf" }, value: b.count });
  values.push({ metricName: `${name}_sum`, labels, value: b.sum });
  values.push({ metricName: `${name}_count`, labels, value: b.count });
  return values;
}
