// The dashboard's one money format (web/src/format.ts): every amount with the same four decimals,
// exact digit arithmetic (no float), rounding half away from zero, tiny amounts never shown as zero.
import { describe, expect, it } from "vitest";
import { formatMoney, moneyExact, moneyHidesDigits, MONEY_DECIMALS, sumMoney } from "../../web/src/format.js";

describe("formatMoney", () => {
  it("shows every amount with the same number of decimals", () => {
    expect(MONEY_DECIMALS).toBe(4);
    expect(formatMoney("20")).toBe("$20.0000");
    expect(formatMoney("20.00")).toBe("$20.0000");
    expect(formatMoney("1234.5")).toBe("$1,234.5000");
    expect(formatMoney("0.0018")).toBe("$0.0018");
    expect(formatMoney("1000000.00")).toBe("$1,000,000.0000");
    expect(formatMoney("0")).toBe("$0.0000");
    expect(formatMoney("-0.00")).toBe("$0.0000");
    const decimals = ["5", "0.0018", "22.5", "0.08", "123456.123456789"].map((usd) => formatMoney(usd).split(".")[1]!.length);
    expect(new Set(decimals)).toEqual(new Set([MONEY_DECIMALS]));
  });

  it("rounds half away from zero on the digits, carrying into the whole dollars", () => {
    expect(formatMoney("0.00014999")).toBe("$0.0001");
    expect(formatMoney("0.00015")).toBe("$0.0002");
    expect(formatMoney("-0.00015")).toBe("-$0.0002");
    expect(formatMoney("999.99995")).toBe("$1,000.0000");
    // Beyond a float's precision: still exact.
    expect(formatMoney("9007199254740993.00005")).toBe("$9,007,199,254,740,993.0001");
  });

  it("never shows an amount that is not zero as zero", () => {
    expect(formatMoney("0.000012")).toBe("<$0.0001");
    expect(formatMoney("-0.000012")).toBe("-<$0.0001");
    expect(formatMoney("0.000000001")).toBe("<$0.0001");
  });

  it("gives the exact amount for the tooltip when rounding hides digits", () => {
    expect(moneyHidesDigits("0.000012")).toBe(true);
    expect(moneyHidesDigits("1.23450")).toBe(false);
    expect(moneyHidesDigits("20")).toBe(false);
    expect(moneyExact("1234.000012000")).toBe("$1,234.000012");
    expect(moneyExact("-0.5")).toBe("-$0.50");
  });

  it("leaves text that is not an amount as it is", () => {
    expect(formatMoney("no cap")).toBe("no cap");
  });
});

describe("sumMoney", () => {
  it("adds decimal amounts exactly, where floats would drift", () => {
    expect(sumMoney(["0.1", "0.2"])).toBe("0.300000000");
    expect(sumMoney(Array.from({ length: 10 }, () => "0.000000001"))).toBe("0.000000010");
    expect(sumMoney(["-1.5", "0.25"])).toBe("-1.250000000");
    expect(formatMoney(sumMoney([]))).toBe("$0.0000");
  });
});
