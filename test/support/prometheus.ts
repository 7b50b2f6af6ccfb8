// Reading a /metrics exposition in tests. Every line is checked against the text format's grammar
// (# HELP / # TYPE lines, samples `name{label="value",...} number`) and the whole text must also
// parse with parse-prometheus-text-format. That package folds labelled histograms into one sample
// (it keeps neither their labels nor _count/_sum), so samples are read from the checked lines here;
// histograms are checked for cumulative buckets whose +Inf equals _count.
import parsePrometheusTextFormat from "parse-prometheus-text-format";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Families {
  types: Map<string, string>;
  samples: Sample[];
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`;
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*,?)?\\})? (\\S+)(?: -?\\d+)?$`);
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"/g;
// Prometheus reads values with Go's ParseFloat, which takes Inf and NaN in every letter case (prom-client
// writes "Nan" for an empty event-loop histogram).
const NUMBER = /^(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|[+-]?inf|nan)$/i;

export function parseExposition(text: string): Families {
  parsePrometheusTextFormat(text); // throws on a line it cannot read
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      if (!new RegExp(`^${NAME}$`).test(meta[2]!)) throw new Error(`bad metric name: ${line}`);
      if (meta[1] === "TYPE") {
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(meta[3]!)) throw new Error(`bad type: ${line}`);
        types.set(meta[2]!, meta[3]!);
      }
      continue;
    }
    if (line.startsWith("#")) continue;
    const match = SAMPLE.exec(line);
    if (!match || !NUMBER.test(match[3]!)) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (match[2] ?? "").matchAll(LABEL_PAIR)) labels[k!] = v!.replace(/\\n/g, "\n").replace(/\\(["\\])/g, "$1");
    samples.push({ name: match[1]!, labels, value: match[3] === "+Inf" ? Infinity : Number(match[3]) });
  }
  const families = { types, samples };
  for (const [name, type] of types) if (type === "histogram") checkHistogram(families, name);
  return families;
}

const withoutLe = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).filter(([k]) => k !== "le"));

function checkHistogram(f: Families, name: string): void {
  const series = new Map<string, Array<[number, number]>>();
  for (const s of f.samples) {
    if (s.name !== `${name}_bucket`) continue;
    const key = withoutLe(s.labels);
    const le = s.labels.le === "+Inf" ? Infinity : Number(s.labels.le);
    series.set(key, [...(series.get(key) ?? []), [le, s.value]]);
  }
  for (const [key, buckets] of series) {
    buckets.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < buckets.length; i++) if (buckets[i]![1] < buckets[i - 1]![1]) throw new Error(`${name}${key}: bucket counts decrease`);
    const count = f.samples.find((s) => s.name === `${name}_count` && withoutLe(s.labels) === key);
    if (buckets.at(-1)![0] !== Infinity || count?.value !== buckets.at(-1)![1]) throw new Error(`${name}${key}: +Inf bucket is not _count`);
  }
}

function matching(f: Families, name: string, labels: Record<string, string>): Sample[] {
  if (!f.types.has(name)) throw new Error(`no metric ${name} in the exposition`);
  return f.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The sum of a counter's or gauge's series whose labels include `labels`. */
export function valueOf(f: Families, name: string, labels: Record<string, string> = {}): number {
  if (f.types.get(name) === "histogram") throw new Error(`${name} is a histogram`);
  return matching(f, name, labels).reduce((total, s) => total + s.value, 0);
}

/** A histogram's count and sum over the series whose labels include `labels`. */
export function histogramOf(f: Families, name: string, labels: Record<string, string> = {}): { count: number; sum: number } {
  if (f.types.get(name) !== "histogram") throw new Error(`${name} is not a histogram`);
  const pick = (suffix: string) => f.samples.filter((s) => s.name === `${name}${suffix}` && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return { count: pick("_count").reduce((t, s) => t + s.value, 0), sum: pick("_sum").reduce((t, s) => t + s.value, 0) };
}

/** The label sets of a metric's series. */
export function seriesOf(f: Families, name: string): Array<Record<string, string>> {
  return matching(f, name, {}).map((s) => s.labels);
}
