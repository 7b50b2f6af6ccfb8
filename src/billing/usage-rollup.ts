// Reading usage from usage_hourly (migration 0017; docs/storage.md, "Usage rollup"; ADR 0027): the
// ledger's usage rows summed per key, UTC hour, account, model and provider, kept by the database in
// the transaction of every ledger insert and delete. A window of whole hours is read from the rollup
// alone; the hours cut by a window's start or end are read from the ledger itself (at most two partial
// hours, on the ledger_key_time index), so every answer is exactly the ledger's, to the millisecond.
import { sql, type RawBuilder } from "kysely";
import { HOUR_MS } from "../store/dimension-sql.js";
import { DIMENSION_SET, type DimensionSet } from "../core/dimensions.js";
import { summedColumns } from "./usage-report.js";

export { HOUR_MS };
export const HOURS_PER_DAY = 24;

/** `sum(requests) as requests, cast(sum(c) as bigint) as c, …`: sumColumnsSql's columns, from rollup rows. */
export function rollupSumsSql(dimensions: DimensionSet = DIMENSION_SET): RawBuilder<unknown> {
  return sql.join([sql`cast(sum(requests) as bigint) as requests`, ...summedColumns(dimensions).map((c) => sql`cast(sum(${sql.ref(c)}) as bigint) as ${sql.ref(c)}`)]);
}

/** A window [start, end) in epoch ms, split into whole rollup hours and the ledger ranges at its edges. */
export interface SplitWindow {
  /** Whole hours, [firstHour, endHour); empty when firstHour >= endHour. */
  firstHour: number;
  endHour: number;
  /** Millisecond ranges [start, end) to read from the ledger: the partial hours (none, one or two). */
  edges: Array<{ start: number; end: number }>;
}

export function splitWindow(start: number, end: number): SplitWindow {
  const firstHour = Math.ceil(start / HOUR_MS);
  const endHour = Math.floor(end / HOUR_MS);
  if (firstHour >= endHour) return { firstHour, endHour: firstHour, edges: start < end ? [{ start, end }] : [] };
  const edges: SplitWindow["edges"] = [];
  if (start < firstHour * HOUR_MS) edges.push({ start, end: firstHour * HOUR_MS });
  if (endHour * HOUR_MS < end) edges.push({ start: endHour * HOUR_MS, end });
  return { firstHour, endHour, edges };
}

/** One key's whole hours grouped by model and UTC day (usage_hourly's primary key, a range of one key). */
export function keyRollupQuery(keyId: string, firstHour: number, endHour: number, dimensions: DimensionSet = DIMENSION_SET) {
  return sql<
    { model: string | null; day: bigint } & Record<string, bigint | string | null>
  >`select nullif(model, '') as model, hour / ${sql.lit(HOURS_PER_DAY)} as day, ${rollupSumsSql(dimensions)}
    from usage_hourly
    where key_id = ${keyId} and hour >= ${BigInt(firstHour)} and hour < ${BigInt(endHour)}
    group by model, hour / ${sql.lit(HOURS_PER_DAY)}`;
}
