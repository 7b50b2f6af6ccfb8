import { describe, expect, it } from "vitest";
import { Cancellation } from "./cancellation.js";

describe("Cancellation", () => {
  it("is aborted once: listeners hear it a single time, later calls change nothing", () => {
    const cancellation = new Cancellation();
    const heard: string[] = [];
    cancellation.on("abort", () => heard.push("on"));
    cancellation.once("abort", () => heard.push("once"));
    expect(cancellation.aborted).toBe(false);
    cancellation.abort();
    cancellation.abort();
    expect(cancellation.aborted).toBe(true);
    expect(heard).toEqual(["on", "once"]);
  });

  it("a removed listener is not called", () => {
    const cancellation = new Cancellation();
    let calls = 0;
    const listener = () => (calls += 1);
    cancellation.once("abort", listener);
    cancellation.off("abort", listener);
    cancellation.abort();
    expect(calls).toBe(0);
  });
});
