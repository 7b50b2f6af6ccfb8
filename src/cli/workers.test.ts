import { describe, expect, it } from "vitest";
import { MAX_RESTARTS_PER_MINUTE, RestartBudget } from "./workers.js";

describe("RestartBudget", () => {
  it("doubles the delay with each restart in the minute, up to a ceiling, then refuses", () => {
    let now = 0;
    const budget = new RestartBudget(MAX_RESTARTS_PER_MINUTE, 60_000, () => now);
    const delays: Array<number | null> = [];
    for (let i = 0; i <= MAX_RESTARTS_PER_MINUTE; i++) {
      delays.push(budget.next());
      now += 1_000;
    }
    expect(delays).toEqual([250, 500, 1000, 2000, 4000, null]);
  });

  it("never waits more than 4 s, however high the cap", () => {
    const budget = new RestartBudget(20, 60_000, () => 0);
    const delays = Array.from({ length: 8 }, () => budget.next());
    expect(delays).toEqual([250, 500, 1000, 2000, 4000, 4000, 4000, 4000]);
  });

  it("forgets restarts older than the window", () => {
    let now = 0;
    const budget = new RestartBudget(2, 60_000, () => now);
    expect(budget.next()).toBe(250);
    now = 30_000;
    expect(budget.next()).toBe(500);
    expect(budget.next()).toBeNull();
    now = 60_000; // the first restart left the window
    expect(budget.next()).toBe(500);
    now = 200_000;
    expect(budget.next()).toBe(250);
  });
});
