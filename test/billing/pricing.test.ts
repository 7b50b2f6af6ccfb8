import { describe, expect, it } from "vitest";
import { imagePrice, priceUsage, projectCost, projectTokens } from "../../src/billing/pricing.js";
import { normalizeUsage } from "../../src/billing/billing-store.js";
import { admission, chatModel, MODEL, usage } from "./support.js";

describe("priceUsage", () => {
  it("prices uncached input, cached input and output (reasoning included) exactly", () => {
    // 800 × 2.5e9 + 200 × 1.25e9 + 500 × 1e10 = 7.25e12; / 1e6 = 7,250,000 nano = $0.00725.
    expect(priceUsage(MODEL, usage(1000, 500, { cachedInputTokens: 200, reasoningTokens: 100 }))).toBe(7_250_000n);
    // Reasoning tokens are part of the output count, not added again.
    expect(priceUsage(MODEL, usage(0, 500, { reasoningTokens: 500 }))).toBe(5_000_000n);
    expect(priceUsage(MODEL, usage(0, 0))).toBe(0n);
  });

  it("rounds once, upwards, after summing the components", () => {
    const model = chatModel({ pricing: { ...MODEL.pricing, inputPerMtok: 400_000n, cachedInputPerMtok: 400_000n, outputPerMtok: 400_000n } });
    // 0.4 + 0.4 nano = 0.8 -> 1 (rounding each component would give 2).
    expect(priceUsage(model, usage(1, 1))).toBe(1n);
    // 3 × 0.4 = 1.2 -> 2; 5 × 0.4 = 2.0 -> 2 exactly.
    expect(priceUsage(model, usage(3, 0))).toBe(2n);
    expect(priceUsage(model, usage(5, 0))).toBe(2n);
    // A sub-nano price still bills something for a single delivered token.
    const tiny = chatModel({ pricing: { ...MODEL.pricing, outputPerMtok: 1n } });
    expect(priceUsage(tiny, usage(0, 1))).toBe(1n);
  });

  it("stays exact far beyond float precision", () => {
    // 10^9 output tokens at $10/Mtok = $10,000 = 1e13 nano, and one more token adds exactly 10,000 nano.
    expect(priceUsage(MODEL, usage(0, 1_000_000_000))).toBe(10_000_000_000_000n);
    expect(priceUsage(MODEL, usage(0, 1_000_000_001))).toBe(10_000_000_010_000n);
  });

  it("caps cached tokens at the input count", () => {
    expect(priceUsage(MODEL, usage(100, 0, { cachedInputTokens: 500 }))).toBe(125_000n);
  });

  it("prices images by SIZE/QUALITY, then SIZE, then default", () => {
    const perImage = new Map([
      ["1024x1024/hd", 80_000_000n],
      ["1024x1024", 40_000_000n],
      ["default", 20_000_000n],
    ]);
    const model = chatModel({ kind: "image", pricing: { ...MODEL.pricing, perImage } });
    expect(imagePrice(model, "1024x1024/hd")).toBe(80_000_000n);
    expect(imagePrice(model, "1024x1024/standard")).toBe(40_000_000n);
    expect(imagePrice(model, "512x512/hd")).toBe(20_000_000n);
    expect(imagePrice(model)).toBe(20_000_000n);
    expect(priceUsage(model, usage(0, 0, { images: 3 }), "1024x1024/hd")).toBe(240_000_000n);
    expect(imagePrice(chatModel(), "1024x1024")).toBe(0n);
  });

  it("prices video seconds", () => {
    const model = chatModel({ kind: "video", pricing: { ...MODEL.pricing, perVideoSecond: 100_000_000n } });
    expect(priceUsage(model, usage(0, 0, { videoSeconds: 8 }))).toBe(800_000_000n);
  });

  it("rejects negative or non-finite counts", () => {
    expect(() => priceUsage(MODEL, usage(-1, 0))).toThrow(RangeError);
    expect(() => priceUsage(MODEL, usage(Number.NaN, 0))).toThrow(RangeError);
  });
});

describe("projectCost", () => {
  it("prices every projected input token as uncached, plus output, images and seconds", () => {
    expect(projectCost(admission("a", "k", 1000, 500))).toBe(7_500_000n);
    expect(projectTokens(admission("a", "k", 1000, 500))).toBe(1500);
    const video = chatModel({ kind: "video", pricing: { ...MODEL.pricing, perVideoSecond: 100_000_000n } });
    expect(projectCost(admission("a", "k", 0, 0, { model: video, projectedVideoSeconds: 12 }))).toBe(1_200_000_000n);
  });
});

describe("normalizeUsage", () => {
  it("rounds estimates up and keeps the parts within their totals", () => {
    expect(normalizeUsage(usage(10.2, 3.5, { cachedInputTokens: 20, reasoningTokens: 9, estimated: true }))).toEqual({
      inputTokens: 11,
      cachedInputTokens: 11,
      outputTokens: 4,
      reasoningTokens: 4,
      estimated: true,
    });
  });
});
