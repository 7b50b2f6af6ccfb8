import { describe, expect, it } from "vitest";
import { nestsDeeperThan } from "./json-body.js";

describe("nestsDeeperThan", () => {
  it("counts objects and arrays, and allows exactly the limit", () => {
    expect(nestsDeeperThan("[[[]]]", 3)).toBe(false);
    expect(nestsDeeperThan("[[[[]]]]", 3)).toBe(true);
    expect(nestsDeeperThan('{"a":{"b":[1]}}', 3)).toBe(false);
    expect(nestsDeeperThan('{"a":{"b":[{}]}}', 3)).toBe(true);
    // Siblings do not add up.
    expect(nestsDeeperThan("[[1],[2],[[3]]]", 3)).toBe(false);
  });

  it("ignores brackets inside strings, escaped quotes and backslashes included", () => {
    expect(nestsDeeperThan('["[[[[[[", "{{{{"]', 1)).toBe(false);
    expect(nestsDeeperThan('["a \\" [[[[ still inside"]', 1)).toBe(false);
    expect(nestsDeeperThan('["ends with a backslash \\\\", [[1]]]', 2)).toBe(true);
    expect(nestsDeeperThan('["ends with a backslash \\\\", [1]]', 2)).toBe(false);
  });

  it("stops at the first level too deep, without reading the rest", () => {
    const deep = "[".repeat(1_000_000);
    const started = performance.now();
    expect(nestsDeeperThan(deep, 128)).toBe(true);
    expect(performance.now() - started).toBeLessThan(50);
  });

  it("leaves malformed JSON to the parser", () => {
    expect(nestsDeeperThan('["unterminated', 1)).toBe(false);
    expect(nestsDeeperThan("]]]][[", 1)).toBe(false);
  });
});
