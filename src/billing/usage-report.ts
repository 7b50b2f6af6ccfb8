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
import { CACHE_SAVING_COLUMN, DIMENSION_SET, TOKEN_PART_NAMES, TOKEN_PARTS, type DimensionSet, type DimensionValues } from "../core/dimensions.js";

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
  dimensions: DimensionValues<DimensionTotals>;
  /** Signed, nano-USD. */
  cacheSaving: bigint;
}

/** What a grouped ledger query selects (sumColumnsSql) besides its group keys. */
export type UsageSumsRow = { requests: bigint } & Record<string, bigint | string | null>;

const summed = new WeakMap<DimensionSet, readonly string[]>();

/** Every column a usage report sums: the base counts, every dimension's count and cost column, the saving. */
export function summedColumns(dimensions: DimensionSet): readonly string[] {
  let columns = summed.get(dimensions);
  if (columns === undefined) {
    columns = [
      ...new Set([
        "input_tokens",
        "cached_tokens",
        "output_tokens",
        "reasoning_tokens",
        "cost_nano",
        ...dimensions.list.flatMap((d) => (d.countColumn === null ? [] : [d.countColumn])),
        ...dimensions.list.map((d) => d.costColumn),
        CACHE_SAVING_COLUMN,
      ]),
    ];
    summed.set(dimensions, columns);
  }
  return columns;
}

/** The columns the gateway's reports sum (summedColumns of DIMENSIONS); usage_hourly has each. */
export const SUMMED_COLUMNS: readonly string[] = summedColumns(DIMENSION_SET);

/** `count(*) as requests, cast(sum(c) as bigint) as c, …` (sum() of bigint is numeric on PostgreSQL: cast back). */
export function sumColumnsSql(dimensions: DimensionSet = DIMENSION_SET): RawBuilder<unknown> {
  return sql.join([sql`count(*) as requests`, ...summedColumns(dimensions).map((c) => sql`cast(sum(${sql.ref(c)}) as bigint) as ${sql.ref(c)}`)]);
}

export function emptyTotals(dimensions: DimensionSet = DIMENSION_SET): UsageTotals {
  const totals: Record<string, DimensionTotals> = {};
  for (const d of dimensions.list) totals[d.name] = { count: 0n, cost: 0n };
  // Every name of the list is a key; a list injected in tests extends DIMENSIONS.
  const byName = totals as DimensionValues<DimensionTotals>;
  return { requests: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0, reasoningTokens: 0, cost: 0n, dimensions: byName, cacheSaving: 0n };
}

function big(value: bigint | string | number | null | undefined): bigint {
  return value === null || value === undefined ? 0n : BigInt(value);
}

/**
 * Adds one grouped row into totals. The derived counts: a token part's rest dimension is the part's
 * total column less its other dimensions' count columns ("input": all input less the cache reads and
 * writes), and a unit dimension of 1 per request counts the requests.
 */
export function addSums(target: UsageTotals, row: UsageSumsRow, dimensions: DimensionSet = DIMENSION_SET): void {
  const requests = big(row.requests);
  target.requests += Number(requests);
  target.inputTokens += Number(big(row.input_tokens));
  target.outputTokens += Number(big(row.output_tokens));
  target.cachedTokens += Number(big(row.cached_tokens));
  target.reasoningTokens += Number(big(row.reasoning_tokens));
  target.cost += big(row.cost_nano);
  target.cacheSaving += big(row[CACHE_SAVING_COLUMN]);
  for (const part of TOKEN_PART_NAMES) {
    const { shares, rest } = dimensions.parts[part];
    let left = big(row[TOKEN_PARTS[part].column]);
    for (const d of shares) {
      const count = d.countColumn === null ? 0n : big(row[d.countColumn]);
      target.dimensions[d.name]!.count += count;
      left -= count;
    }
    target.dimensions[rest.name]!.count += left;
  }
  for (const d of dimensions.units) target.dimensions[d.name]!.count += d.usageField === null ? requests : d.countColumn === null ? 0n : big(row[d.countColumn]);
  for (const d of dimensions.list) target.dimensions[d.name]!.cost += big(row[d.costColumn]);
}

const RATIO_PLACES = 1_000_000n;

/** cached / all, a decimal string truncated to 6 places ("0.833333"); null when there is no input. */
export function hitRatio(cached: bigint, all: bigint): string | null {
  if (all <= 0n) return null;
  const scaled = (cached * RATIO_PLACES) / all;
  return `${scaled / RATIO_PLACES}.${(scaled % RATIO_PLACES).toString().padStart(6, "0")}`;
}

/** The JSON of totals: the counts as before, then one entry per dimension and the cache summary. */
export function usageTotalsJson(t: UsageTotals, dimensions: DimensionSet = DIMENSION_SET) {
  const entries: Record<string, Record<string, number | string>> = {};
  for (const d of dimensions.list) {
    const entry = t.dimensions[d.name]!;
    entries[d.name] = { [d.counts]: Number(entry.count), cost_usd: formatUsd(entry.cost) };
  }
  const sum = (list: DimensionSet["cacheReads"], of: keyof DimensionTotals) => list.reduce((total, d) => total + t.dimensions[d.name]![of], 0n);
  return {
    requests: t.requests,
    input_tokens: t.inputTokens,
    output_tokens: t.outputTokens,
    cached_tokens: t.cachedTokens,
    reasoning_tokens: t.reasoningTokens,
    cost_usd: formatUsd(t.cost),
    dimensions: entries,
    cache: {
      read_tokens: Number(sum(dimensions.cacheReads, "count")),
      read_cost_usd: formatUsd(sum(dimensions.cacheReads, "cost")),
      write_tokens: Number(sum(dimensions.cacheWrites, "count")),
      write_cost_usd: formatUsd(sum(dimensions.cacheWrites, "cost")),
      hit_ratio: hitRatio(BigInt(t.cachedTokens), BigInt(t.inputTokens)),
      saving_usd: formatUsd(t.cacheSaving),
    },
  };
}
