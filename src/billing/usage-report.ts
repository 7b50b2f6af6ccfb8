// Usage totals per pricing dimension, shared by /v1/usage, /v1/me and the dashboard's usage views, all
// derived from the dimension list (dimensions.ts): the ledger sums to select, how a grouped row adds
// into totals, and the JSON every report shows (per dimension, and what caching did).
//
// Caching, as reported: reads are the cached input tokens and their cost; writes are the 5-minute and
// 1-hour cache writes and their cost; the hit ratio is cached input / all input (cache writes and
// reads included), a decimal string truncated to 6 places, null without input; the saving is the sum
// of the ledger's cache_saving_nano (pricing.ts: reads at the input price minus their cost, minus the
// writes' premium over the input price, at the prices of each request; negative when writes cost more
// than reads saved). Rows settled before migration 0008 have no per-dimension split: 0 in each.
import { sql, type RawBuilder } from "kysely";
import { formatUsd, type Nano } from "../core/money.js";
import { CACHE_SAVING_COLUMN, CACHE_WRITE_DIMENSIONS, DIMENSIONS, type DimensionName } from "../core/dimensions.js";

export interface DimensionTotals {
  count: bigint;
  cost: Nano;
}

export interface UsageTotals {
  requests: number;
  /** All input, cached reads and cache writes included. */
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  cost: Nano;
  dimensions: Record<DimensionName, DimensionTotals>;
  /** Signed, nano-USD. */
  cacheSaving: bigint;
}

/** What a grouped ledger query selects (sumColumnsSql) besides its group keys. */
export type UsageSumsRow = { requests: bigint } & Record<string, bigint | string | null>;

/** Every column a usage report sums: the base counts, every dimension's count and cost column, the saving. */
export const SUMMED_COLUMNS: readonly string[] = [
  ...new Set([
    "input_tokens",
    "cached_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cost_nano",
    ...DIMENSIONS.flatMap((d) => (d.countColumn === null ? [] : [d.countColumn])),
    ...DIMENSIONS.map((d) => d.costColumn),
    CACHE_SAVING_COLUMN,
  ]),
];

/** `count(*) as requests, cast(sum(c) as bigint) as c, …` (sum() of bigint is numeric on PostgreSQL: cast back). */
export function sumColumnsSql(): RawBuilder<unknown> {
  return sql.join([sql`count(*) as requests`, ...SUMMED_COLUMNS.map((c) => sql`cast(sum(${sql.ref(c)}) as bigint) as ${sql.ref(c)}`)]);
}

export function emptyTotals(): UsageTotals {
  const dimensions = {} as Record<DimensionName, DimensionTotals>;
  for (const d of DIMENSIONS) dimensions[d.name] = { count: 0n, cost: 0n };
  return { requests: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0, reasoningTokens: 0, cost: 0n, dimensions, cacheSaving: 0n };
}

function big(value: bigint | string | number | null | undefined): bigint {
  return value === null || value === undefined ? 0n : BigInt(value);
}

/** Adds one grouped row into totals. */
export function addSums(target: UsageTotals, row: UsageSumsRow): void {
  const requests = big(row.requests);
  target.requests += Number(requests);
  target.inputTokens += Number(big(row.input_tokens));
  target.outputTokens += Number(big(row.output_tokens));
  target.cachedTokens += Number(big(row.cached_tokens));
  target.reasoningTokens += Number(big(row.reasoning_tokens));
  target.cost += big(row.cost_nano);
  target.cacheSaving += big(row[CACHE_SAVING_COLUMN]);
  const counted: Partial<Record<DimensionName, bigint>> = {};
  for (const d of DIMENSIONS) if (d.countColumn !== null) counted[d.name] = big(row[d.countColumn]);
  // The derived counts: every usage row is one request; "input" is what is neither a cache read nor a write.
  counted.request = requests;
  counted.input = big(row.input_tokens) - (counted.cached_input ?? 0n) - CACHE_WRITE_DIMENSIONS.reduce((sum, name) => sum + (counted[name] ?? 0n), 0n);
  for (const d of DIMENSIONS) {
    const entry = target.dimensions[d.name];
    entry.count += counted[d.name] ?? 0n;
    entry.cost += big(row[d.costColumn]);
  }
}

const RATIO_PLACES = 1_000_000n;

/** cached / all, a decimal string truncated to 6 places ("0.833333"); null when there is no input. */
export function hitRatio(cached: bigint, all: bigint): string | null {
  if (all <= 0n) return null;
  const scaled = (cached * RATIO_PLACES) / all;
  return `${scaled / RATIO_PLACES}.${(scaled % RATIO_PLACES).toString().padStart(6, "0")}`;
}

/** The JSON of totals: the counts as before, then one entry per dimension and the cache summary. */
export function usageTotalsJson(t: UsageTotals) {
  const dimensions: Record<string, Record<string, number | string>> = {};
  for (const d of DIMENSIONS) {
    const entry = t.dimensions[d.name];
    dimensions[d.name] = { [d.counts]: Number(entry.count), cost_usd: formatUsd(entry.cost) };
  }
  const writes = CACHE_WRITE_DIMENSIONS.map((name) => t.dimensions[name]);
  return {
    requests: t.requests,
    input_tokens: t.inputTokens,
    output_tokens: t.outputTokens,
    cached_tokens: t.cachedTokens,
    reasoning_tokens: t.reasoningTokens,
    cost_usd: formatUsd(t.cost),
    dimensions,
    cache: {
      read_tokens: Number(t.dimensions.cached_input.count),
      read_cost_usd: formatUsd(t.dimensions.cached_input.cost),
      write_tokens: Number(writes.reduce((sum, w) => sum + w.count, 0n)),
      write_cost_usd: formatUsd(writes.reduce((sum, w) => sum + w.cost, 0n)),
      hit_ratio: hitRatio(BigInt(t.cachedTokens), BigInt(t.inputTokens)),
      saving_usd: formatUsd(t.cacheSaving),
    },
  };
}
