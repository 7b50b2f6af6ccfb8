import { describe, expect, it } from "vitest";
import { ceilDiv, formatUsd, MAX_TOTAL_SPENT, parseUsd } from "./money.js";

describe("money", () => {
  it("parses decimals exactly", () => {
    expect(parseUsd("12")).toBe(12_000_000_000n);
    expect(parseUsd("0.1")).toBe(100_000_000n);
    expect(parseUsd("0.000000001")).toBe(1n);
    expect(parseUsd("-3.25")).toBe(-3_250_000_000n);
    expect(parseUsd(0.15)).toBe(150_000_000n);
  });
  it("rejects what is not a plain decimal", () => {
    for (const bad of ["", "abc", "1.0000000001", "1e3", "1,000", " . "]) expect(parseUsd(bad)).toBeNull();
    expect(parseUsd(1e-10)).toBeNull();
    expect(parseUsd(Number.NaN)).toBeNull();
  });
  it("formats with at least two decimals", () => {
    expect(formatUsd(1_500_000_000n)).toBe("1.50");
    expect(formatUsd(1n)).toBe("0.000000001");
    expect(formatUsd(0n)).toBe("0.00");
    expect(formatUsd(MAX_TOTAL_SPENT)).toBe("999999999.99");
    expect(formatUsd(-250_000_000n)).toBe("-0.25");
  });
  it("rounds fractions of a nano up", () => {
    expect(ceilDiv(10n, 3n)).toBe(4n);
    expect(ceilDiv(9n, 3n)).toBe(3n);
    expect(ceilDiv(0n, 3n)).toBe(0n);
  });
});
