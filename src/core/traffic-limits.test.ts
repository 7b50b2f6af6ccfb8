import { describe, expect, it } from "vitest";
import { trafficRefusalError, trafficStatus, WINDOW_MS, type TrafficLimit } from "./traffic-limits.js";

const limit: TrafficLimit = { scope: "key:k", subject: "key", requestsPerMinute: 60, tokensPerMinute: null, concurrentRequests: null };

describe("a window opened by a request stamped later than the one judged", () => {
  // Two processes stamp their requests with their own clocks; the later one can open the window first.
  const window = { windowStart: 1_000_000, requests: 60, tokens: 0, inFlight: 0 };
  const now = window.windowStart - 700;

  it("asks for a retry after at most one window", () => {
    const error = trafficRefusalError(limit, { index: 0, kind: "rpm", window }, now, false);
    expect(error.details.headers?.["retry-after"]).toBe(String(WINDOW_MS / 1000));
  });

  it("reports a reset at most one window away", () => {
    expect(trafficStatus([limit], [window], now).requests?.resetMs).toBe(WINDOW_MS);
  });

  it("still counts down inside the window", () => {
    const error = trafficRefusalError(limit, { index: 0, kind: "rpm", window }, window.windowStart + 30_500, false);
    expect(error.details.headers?.["retry-after"]).toBe("30");
  });
});
