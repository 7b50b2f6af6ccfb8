import { describe, expect, it } from "vitest";
import { defaultWorkers } from "./main.js";

describe("gateway serve's default worker count", () => {
  it("is 2 on SQLite (the count that measured fastest), at most the cores", () => {
    expect(defaultWorkers(true, 16)).toBe(2);
    expect(defaultWorkers(true, 2)).toBe(2);
    expect(defaultWorkers(true, 1)).toBe(1);
  });

  it("is one per core on PostgreSQL", () => {
    expect(defaultWorkers(false, 16)).toBe(16);
    expect(defaultWorkers(false, 1)).toBe(1);
  });
});
