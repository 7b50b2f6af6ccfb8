import { describe, expect, it } from "vitest";
import { applicableLimits, limitsArgument, NO_TIER_LIMITS, subjectLimitsFromInput } from "./traffic-limits.js";

describe("limitsArgument", () => {
  it("is the same text for the same list, and the text of each list's own figures", () => {
    const subjects = { keyId: "k1", accountId: "a1", keyLimits: subjectLimitsFromInput({ requests_per_minute: 5 }), accountLimits: null };
    const limits = applicableLimits(NO_TIER_LIMITS, subjects, "m");
    expect(limitsArgument(limits)).toBe('[["key:k1",5,null,null]]');
    expect(limitsArgument(limits)).toBe(limitsArgument(limits));
    const other = applicableLimits(NO_TIER_LIMITS, { ...subjects, keyLimits: subjectLimitsFromInput({ tokens_per_minute: 7 }) }, "m");
    expect(limitsArgument(other)).toBe('[["key:k1",null,7,null]]');
  });
});
