import { describe, expect, it } from "vitest";
import { NEAR_MISSES, PATTERN_SAMPLES } from "../../../test/support/guardrail-samples.js";
import { BUILTIN_PATTERNS, ibanValid, luhnValid } from "./builtin-patterns.js";
import { compileBuiltins, compileCustom, findMatches, maskText } from "./matcher.js";

const all = compileBuiltins(["secrets", "personal_data"]);

describe("built-in guardrail patterns", () => {
  it("has a sample for every pattern", () => {
    expect(PATTERN_SAMPLES.map((s) => s.id).sort()).toEqual(BUILTIN_PATTERNS.map((p) => p.id).sort());
  });

  it.each(PATTERN_SAMPLES)("finds $id and masks it with its label", ({ id, sample }) => {
    const text = `before ${sample} after`;
    const matches = findMatches(all, text);
    expect(matches.map((m) => m.label)).toEqual([id]);
    expect(maskText(text, matches)).toBe(`before [REDACTED:${id}] after`);
  });

  it.each(NEAR_MISSES)("leaves %s alone", (text) => {
    expect(findMatches(all, `say ${text} now`)).toEqual([]);
  });

  it("checks cards with Luhn and IBANs with mod-97", () => {
    expect(luhnValid("4111111111111111")).toBe(true);
    expect(luhnValid("4111111111111112")).toBe(false);
    expect(ibanValid("DE89370400440532013000")).toBe(true);
    expect(ibanValid("DE89370400440532013001")).toBe(false);
  });

  it("refuses an unknown pattern id by name", () => {
    expect(() => compileBuiltins(["ssn"])).toThrow(/unknown built-in pattern "ssn"/);
  });

  it("stays fast on hostile input (each pattern, 50 KB)", () => {
    const inputs = [
      "a".repeat(50_000) + "@",
      "1 ".repeat(25_000),
      "+1".repeat(25_000),
      "-----BEGIN RSA PRIVATE KEY-----".repeat(1_600),
      "sk-".repeat(16_000),
      "GB82 ".repeat(10_000),
    ];
    for (const input of inputs) {
      const started = performance.now();
      findMatches(all, input);
      expect(performance.now() - started).toBeLessThan(1_000);
    }
  });
});

describe("custom patterns (RE2)", () => {
  it("refuses backreferences and lookaround, naming the pattern", () => {
    expect(() => compileCustom({ name: "twice", pattern: "(a)\\1" })).toThrow(/pattern "twice" is not one RE2 runs in linear time/);
    expect(() => compileCustom({ name: "ahead", pattern: "a(?=b)" })).toThrow(/pattern "ahead"/);
  });

  it("runs (a+)+$ over 50 KB in linear time", () => {
    const pattern = compileCustom({ name: "nested", pattern: "(a+)+$" });
    const input = "a".repeat(50_000) + "!";
    const started = performance.now();
    expect(pattern.find(input)).toEqual([]);
    // A backtracking engine takes longer than the age of the universe here; RE2 a few ms.
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("finds and masks with the pattern's name, case-insensitively when asked", () => {
    const pattern = compileCustom({ name: "project", pattern: "project-[0-9]{4}", caseInsensitive: true });
    const text = "see PROJECT-1234 and project-5678";
    expect(maskText(text, findMatches([pattern], text))).toBe("see [REDACTED:project] and [REDACTED:project]");
  });
});
