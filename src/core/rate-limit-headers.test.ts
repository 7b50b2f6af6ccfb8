import { describe, expect, it } from "vitest";
import { openAiDuration } from "./rate-limit-headers.js";

describe("openAiDuration", () => {
  it("writes milliseconds, seconds with their fraction without trailing zeros, and minutes as OpenAI does", () => {
    const cases: [number, string][] = [
      [0, "0ms"],
      [0.2, "1ms"],
      [250, "250ms"],
      [999.1, "1s"],
      [1000, "1s"],
      [1001, "1.001s"],
      [1010, "1.01s"],
      [1100, "1.1s"],
      [12_500, "12.5s"],
      [12_050, "12.05s"],
      [59_999, "59.999s"],
      [60_000, "1m0s"],
      [60_001, "1m0.001s"],
      [61_500, "1m1.5s"],
      [125_250, "2m5.25s"],
      [-5, "0ms"],
    ];
    for (const [ms, text] of cases) expect([ms, openAiDuration(ms)]).toEqual([ms, text]);
  });
});
