// Percentiles and medians. Values are microseconds unless a name says otherwise.

export interface Summary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

/** Nearest-rank percentiles over the finite values (NaN marks a request without a measurement). */
export function summarize(values: ArrayLike<number>): Summary {
  const finite: number[] = [];
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (Number.isFinite(v)) finite.push(v);
  }
  const sorted = Float64Array.from(finite).sort();
  const n = sorted.length;
  const at = (q: number) => (n === 0 ? Number.NaN : sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))]!);
  let sum = 0;
  for (const v of sorted) sum += v;
  return { count: n, mean: n ? sum / n : Number.NaN, p50: at(0.5), p90: at(0.9), p99: at(0.99), p999: at(0.999), max: n ? sorted[n - 1]! : Number.NaN };
}

export function median(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  const n = finite.length;
  if (n === 0) return Number.NaN;
  return n % 2 === 1 ? finite[(n - 1) / 2]! : (finite[n / 2 - 1]! + finite[n / 2]!) / 2;
}

/** Least-squares slope of y over x. */
export function slope(xs: readonly number[], ys: readonly number[]): number {
  const n = Math.min(xs.length, ys.length);
  if (n < 2) return 0;
  let sx = 0,
    sy = 0,
    sxx = 0,
    sxy = 0;
  for (let i = 0; i < n; i++) {
    sx += xs[i]!;
    sy += ys[i]!;
    sxx += xs[i]! * xs[i]!;
    sxy += xs[i]! * ys[i]!;
  }
  const d = n * sxx - sx * sx;
  return d === 0 ? 0 : (n * sxy - sx * sy) / d;
}
