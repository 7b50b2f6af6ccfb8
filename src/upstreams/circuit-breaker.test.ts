// The breaker's state machine with a fake clock: when it opens, how long it stays open, what its
// half-open trials decide, and which passes may no longer decide anything.
import { describe, expect, it } from "vitest";
import { CircuitBreaker, type BreakerSettings } from "./circuit-breaker.js";

const SETTINGS: BreakerSettings = { windowMs: 30_000, minRequests: 10, failureThreshold: 0.5, openMs: 30_000, halfOpenTrials: 1 };

function run(breaker: CircuitBreaker, failed: boolean, now: number) {
  const pass = breaker.tryPass(now);
  if (!pass) throw new Error("refused");
  return breaker.record(pass, failed, 5, now);
}

describe("circuit breaker", () => {
  it("stays closed below the minimum number of requests, however many fail", () => {
    const breaker = new CircuitBreaker(SETTINGS);
    for (let i = 0; i < 9; i++) expect(run(breaker, true, 1_000 + i)).toBeNull();
    expect(breaker.state(1_010)).toBe("closed");
    expect(run(breaker, true, 1_010)).toEqual({ state: "open", openedUntil: 31_010 });
  });

  it("opens when the failures reach the threshold, not before", () => {
    const breaker = new CircuitBreaker(SETTINGS);
    for (let i = 0; i < 6; i++) run(breaker, false, 1_000);
    for (let i = 0; i < 5; i++) expect(run(breaker, true, 1_000)).toBeNull(); // 5 of 11
    expect(breaker.state(1_000)).toBe("closed");
    expect(run(breaker, true, 1_000)).toEqual({ state: "open", openedUntil: 31_000 }); // 6 of 12
    expect(breaker.tryPass(1_001)).toBeNull();
  });

  it("forgets outcomes older than the window", () => {
    const breaker = new CircuitBreaker(SETTINGS);
    for (let i = 0; i < 9; i++) run(breaker, true, 0);
    expect(run(breaker, true, 30_001)).toBeNull();
    expect(breaker.stats(30_001)).toEqual({ requests: 1, failures: 1, p50Ms: 5 });
  });

  it("keeps the latest 2,000 outcomes under a flood, counting the failures among them", () => {
    const breaker = new CircuitBreaker({ ...SETTINGS, minRequests: 100_000 });
    // 2,500 outcomes in one window, every fifth a failure; then 1,000 more successes.
    for (let i = 0; i < 2_500; i++) run(breaker, i % 5 === 0, 1_000 + i);
    expect(breaker.stats(3_500)).toMatchObject({ requests: 2_000, failures: 400 });
    for (let i = 0; i < 1_000; i++) run(breaker, false, 3_500 + i);
    expect(breaker.stats(4_500)).toMatchObject({ requests: 2_000, failures: 200 });
    // Past the window only the outcomes after its start remain.
    expect(breaker.stats(1_000 + 2_500 + 30_000)).toMatchObject({ requests: 999, failures: 0 });
  });

  it("turns half-open after the open period and admits one trial; a success closes it", () => {
    const breaker = new CircuitBreaker(SETTINGS);
    for (let i = 0; i < 10; i++) run(breaker, true, 0);
    expect(breaker.state(29_999)).toBe("open");
    expect(breaker.tryPass(29_999)).toBeNull();
    expect(breaker.state(30_000)).toBe("half_open");
    const trial = breaker.tryPass(30_000)!;
    expect(trial.trial).toBe(true);
    expect(breaker.tryPass(30_001)).toBeNull(); // the one trial is out
    expect(breaker.record(trial, false, 5, 30_100)).toEqual({ state: "closed" });
    expect(breaker.state(30_100)).toBe("closed");
    // The window starts empty: one more failure does not reopen it.
    expect(run(breaker, true, 30_200)).toBeNull();
  });

  it("a trial's failure opens it again for another period", () => {
    const breaker = new CircuitBreaker(SETTINGS);
    for (let i = 0; i < 10; i++) run(breaker, true, 0);
    const trial = breaker.tryPass(30_000)!;
    expect(breaker.record(trial, true, 5, 30_500)).toEqual({ state: "open", openedUntil: 60_500 });
    expect(breaker.tryPass(60_499)).toBeNull();
    expect(breaker.tryPass(60_500)?.trial).toBe(true);
  });

  it("a neutral trial hands its slot back without deciding", () => {
    const breaker = new CircuitBreaker(SETTINGS);
    for (let i = 0; i < 10; i++) run(breaker, true, 0);
    const trial = breaker.tryPass(30_000)!;
    breaker.release(trial);
    expect(breaker.state(30_000)).toBe("half_open");
    expect(breaker.tryPass(30_000)?.trial).toBe(true);
  });

  it("a request admitted before the breaker opened does not close it", () => {
    const breaker = new CircuitBreaker(SETTINGS);
    const early = breaker.tryPass(0)!;
    for (let i = 0; i < 10; i++) run(breaker, true, 0);
    expect(breaker.record(early, false, 5, 30_000)).toBeNull();
    expect(breaker.state(30_000)).toBe("half_open");
  });

  it("adopts a newer shared state and ignores an older one", () => {
    const breaker = new CircuitBreaker(SETTINGS);
    breaker.adopt({ state: "open", openedUntil: 40_000 }, 10_000);
    expect(breaker.state(39_999)).toBe("open");
    breaker.adopt({ state: "closed" }, 9_000);
    expect(breaker.state(39_999)).toBe("open");
    breaker.adopt({ state: "closed" }, 11_000);
    expect(breaker.state(11_000)).toBe("closed");
  });

  it("reports the window's median latency", () => {
    const breaker = new CircuitBreaker(SETTINGS);
    for (const latency of [30, 10, 20]) breaker.record(breaker.tryPass(0)!, false, latency, 0);
    expect(breaker.stats(0)).toEqual({ requests: 3, failures: 0, p50Ms: 20 });
  });
});
