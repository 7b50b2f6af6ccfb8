import { describe, expect, it } from "vitest";
import { editDistance, nearestName } from "./nearest-name.js";

describe("nearestName", () => {
  it("finds a typo's intended name", () => {
    expect(nearestName("gpt-4o-mnii", ["gpt-4o-mini", "gpt-4o", "claude-sonnet"])).toBe("gpt-4o-mini");
    expect(nearestName("Claude-Sonet", ["claude-sonnet", "claude-haiku"])).toBe("claude-sonnet");
  });

  it("suggests nothing for a name that is merely different", () => {
    expect(nearestName("llama-3", ["gpt-4o-mini", "claude-sonnet"])).toBeNull();
    expect(nearestName("x", [])).toBeNull();
  });

  it("measures edits", () => {
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("abc", "abc")).toBe(0);
    expect(editDistance("a", "abcdef", 2)).toBe(3);
  });
});
