import { describe, expect, it } from "vitest";
import { currentPeriodUse, nextPeriodStart, periodStart, periodStarts } from "./key-period.js";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe("key budget periods (UTC)", () => {
  it("a day runs from 00:00 UTC to the next 00:00", () => {
    expect(iso(periodStart("day", at("2026-03-10T23:59:59.999Z")))).toBe("2026-03-10T00:00:00.000Z");
    expect(iso(nextPeriodStart("day", at("2026-03-10T23:59:59.999Z")))).toBe("2026-03-11T00:00:00.000Z");
    expect(iso(periodStart("day", at("2026-03-11T00:00:00.000Z")))).toBe("2026-03-11T00:00:00.000Z");
  });

  it("an ISO week begins on Monday 00:00 UTC, across month and year ends", () => {
    // 2026-03-08 is a Sunday: still the week of Monday 2026-03-02.
    expect(iso(periodStart("week", at("2026-03-08T23:59:59.999Z")))).toBe("2026-03-02T00:00:00.000Z");
    expect(iso(periodStart("week", at("2026-03-09T00:00:00.000Z")))).toBe("2026-03-09T00:00:00.000Z");
    expect(iso(nextPeriodStart("week", at("2026-03-08T12:00:00Z")))).toBe("2026-03-09T00:00:00.000Z");
    // Thursday 2026-01-01 belongs to the week that began on Monday 2025-12-29.
    expect(iso(periodStart("week", at("2026-01-01T10:00:00Z")))).toBe("2025-12-29T00:00:00.000Z");
    expect(iso(nextPeriodStart("week", at("2025-12-31T10:00:00Z")))).toBe("2026-01-05T00:00:00.000Z");
  });

  it("a month is the UTC calendar month, leap February and December included", () => {
    expect(iso(periodStart("month", at("2028-02-29T23:00:00Z")))).toBe("2028-02-01T00:00:00.000Z");
    expect(iso(nextPeriodStart("month", at("2028-02-29T23:00:00Z")))).toBe("2028-03-01T00:00:00.000Z");
    expect(iso(nextPeriodStart("month", at("2026-12-31T23:59:59.999Z")))).toBe("2027-01-01T00:00:00.000Z");
    expect(iso(periodStart("month", at("2027-01-01T00:00:00Z")))).toBe("2027-01-01T00:00:00.000Z");
  });

  it("periodStarts answers every kind and is not fooled by its cache across a boundary", () => {
    const sunday = periodStarts(at("2026-03-08T22:00:00Z"));
    expect(sunday).toEqual({ day: BigInt(at("2026-03-08T00:00:00Z")), week: BigInt(at("2026-03-02T00:00:00Z")), month: BigInt(at("2026-03-01T00:00:00Z")) });
    const monday = periodStarts(at("2026-03-09T00:00:00Z"));
    expect(monday.week).toBe(BigInt(at("2026-03-09T00:00:00Z")));
    expect(periodStarts(at("2026-03-08T23:00:00Z")).week).toBe(BigInt(at("2026-03-02T00:00:00Z")));
  });

  it("counters of an earlier window count as 0", () => {
    const started = at("2026-03-02T00:00:00Z");
    expect(currentPeriodUse("week", started, 5n, 7, at("2026-03-08T23:00:00Z"))).toEqual({ spent: 5n, tokens: 7 });
    expect(currentPeriodUse("week", started, 5n, 7, at("2026-03-09T00:00:00Z"))).toEqual({ spent: 0n, tokens: 0 });
    expect(currentPeriodUse(null, started, 5n, 7, started)).toEqual({ spent: 0n, tokens: 0 });
  });
});
