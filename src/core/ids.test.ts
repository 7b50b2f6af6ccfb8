import { describe, expect, it } from "vitest";
import { monthOf, newId, randomText } from "./ids.js";

describe("ids", () => {
  it("cuts every id from fresh pool bytes: no repeats across several pool refills", () => {
    const seen = new Set<string>();
    // 12 bytes each: 2,000 ids use ~6 pools of 4 KiB, so refills and the pool's tail are crossed.
    for (let i = 0; i < 2000; i++) seen.add(newId("hold"));
    expect(seen.size).toBe(2000);
    for (const id of seen) expect(id).toMatch(/^hold_[A-Za-z0-9_-]{16}$/);
  });

  it("encodes the requested number of bytes", () => {
    expect(randomText(12, "hex")).toMatch(/^[0-9a-f]{24}$/);
    expect(randomText(5, "hex")).toMatch(/^[0-9a-f]{10}$/);
    expect(randomText(12, "base64url")).toMatch(/^[A-Za-z0-9_-]{16}$/);
  });

  it("names the UTC month, also across month and year boundaries and back (cached span)", () => {
    expect(monthOf(Date.UTC(2026, 0, 31, 23, 59, 59, 999))).toBe("2026-01");
    expect(monthOf(Date.UTC(2026, 1, 1, 0, 0, 0))).toBe("2026-02");
    expect(monthOf(Date.UTC(2026, 0, 1, 0, 0, 0))).toBe("2026-01");
    expect(monthOf(Date.UTC(2025, 11, 31, 23, 59, 59, 999))).toBe("2025-12");
    expect(monthOf(BigInt(Date.UTC(2026, 11, 1)))).toBe("2026-12");
    expect(monthOf(Date.UTC(2027, 0, 1) - 1)).toBe("2026-12");
    expect(monthOf(Date.UTC(2027, 0, 1))).toBe("2027-01");
  });
});
