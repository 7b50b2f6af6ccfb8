// A key's periodic budget (migration 0013, ADR 0017): windows of a UTC day, an ISO week (Monday
// 00:00 UTC) or a UTC calendar month. Admission and settlement receive the start of the current
// window of each kind (periodStarts) and the database picks the one of the key's period, so that a
// PATCH that changes the period is honoured by the very next request without a cache.
import type { KeyPeriod } from "../store/tables.js";

export const KEY_PERIODS: readonly KeyPeriod[] = ["day", "week", "month"];

const DAY_MS = 86_400_000;

/** The start (epoch ms) of the window of `period` that contains `now`. */
export function periodStart(period: KeyPeriod, now: number): number {
  const date = new Date(now);
  const day = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  switch (period) {
    case "day":
      return day;
    case "week":
      // getUTCDay: 0 is Sunday; ISO weeks begin on Monday.
      return day - ((date.getUTCDay() + 6) % 7) * DAY_MS;
    case "month":
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  }
}

/** The start of the window after the one that contains `now`: when the periodic budget resets. */
export function nextPeriodStart(period: KeyPeriod, now: number): number {
  const start = periodStart(period, now);
  switch (period) {
    case "day":
      return start + DAY_MS;
    case "week":
      return start + 7 * DAY_MS;
    case "month": {
      const date = new Date(start);
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
    }
  }
}

export interface PeriodStarts {
  day: bigint;
  week: bigint;
  month: bigint;
}

// Asked by every admission and settlement: the last answer is kept for the day it holds for.
let cached = { from: 0, until: -1, starts: { day: 0n, week: 0n, month: 0n } };

/** The start of the current day, ISO week and month at `now`, as the database columns hold them. */
export function periodStarts(now: number): PeriodStarts {
  if (now >= cached.from && now < cached.until) return cached.starts;
  const day = periodStart("day", now);
  const starts = { day: BigInt(day), week: BigInt(periodStart("week", now)), month: BigInt(periodStart("month", now)) };
  if (Number.isFinite(now)) cached = { from: day, until: day + DAY_MS, starts };
  return starts;
}

/** What a key's period counters count at `now`: 0 when they belong to an earlier window. */
export function currentPeriodUse(period: KeyPeriod | null, startedAt: number, spent: bigint, tokens: number, now: number): { spent: bigint; tokens: number } {
  if (period === null || startedAt < periodStart(period, now)) return { spent: 0n, tokens: 0 };
  return { spent, tokens };
}
