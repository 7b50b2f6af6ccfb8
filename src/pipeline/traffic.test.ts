import { describe, expect, it } from "vitest";
import { subjectLimitsFromInput, tierLimitsOf } from "../core/traffic-limits.js";
import type { Principal } from "./auth-cache.js";
import { trafficLimitsFor } from "./traffic.js";

function principal(rpm: number): Principal {
  return {
    key: { id: "key_1", limits: subjectLimitsFromInput({ requests_per_minute: rpm }) },
    account: { id: "acct_1", tier: "standard", limits: null },
  } as unknown as Principal;
}

describe("trafficLimitsFor", () => {
  it("builds one list per principal and model, and a new one for a new principal or new tier limits", () => {
    const config = { tierLimits: new Map([["standard", tierLimitsOf({ account: { concurrent_requests: 3 } })]]) };
    const first = principal(10);
    const limits = trafficLimitsFor(config, first, "m1");
    expect(limits.map((l) => [l.scope, l.requestsPerMinute, l.concurrentRequests])).toEqual([
      ["key:key_1", 10, null],
      ["account:acct_1", null, 3],
    ]);
    expect(trafficLimitsFor(config, first, "m1")).toBe(limits);
    expect(trafficLimitsFor(config, first, "m2")).not.toBe(limits);
    // A changed key limit comes as a new principal (the auth cache drops the old one).
    expect(trafficLimitsFor(config, principal(20), "m1")[0]!.requestsPerMinute).toBe(20);
    // A reloaded config brings new tier limits.
    const reloaded = { tierLimits: new Map([["standard", tierLimitsOf({ account: { concurrent_requests: 4 } })]]) };
    expect(trafficLimitsFor(reloaded, first, "m1")[1]!.concurrentRequests).toBe(4);
  });
});
