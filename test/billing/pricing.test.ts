import { describe, expect, it } from "vitest";
import { dimensionCounts, imagePrice, priceBreakdown, priceUsage, projectCost, projectTokens } from "../../src/billing/pricing.js";
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

// Claude Sonnet 4.5's list prices (USD per Mtok): input 3, 5-minute write 3.75, 1-hour write 6,
// cache read 0.30, output 15; above 200k input tokens 6, 7.50, 12, 0.60 and 22.50. Web search 0.01 a call.
const SONNET = chatModel({
  pricing: {
    inputPerMtok: 3_000_000_000n,
    cachedInputPerMtok: 300_000_000n,
    cacheWrite5mPerMtok: 3_750_000_000n,
    cacheWrite1hPerMtok: 6_000_000_000n,
    outputPerMtok: 15_000_000_000n,
    webSearchPerCall: 10_000_000n,
    perRequest: 0n,
    perImage: new Map(),
    perVideoSecond: 0n,
    longContext: {
      aboveInputTokens: 200_000,
      inputPerMtok: 6_000_000_000n,
      cachedInputPerMtok: 600_000_000n,
      cacheWrite5mPerMtok: 7_500_000_000n,
      cacheWrite1hPerMtok: 12_000_000_000n,
      outputPerMtok: 22_500_000_000n,
    },
  },
});

describe("priceBreakdown: cache writes, long context, tool fees, saving", () => {
  it("bills 5-minute and 1-hour cache writes at their prices and splits the cost per dimension exactly", () => {
    // input 10,000 of which 2,000 cached, 3,000 written for 5m, 1,000 for 1h: 4,000 uncached.
    // 4,000 x 3 + 2,000 x 0.30 + 3,000 x 3.75 + 1,000 x 6 + 500 x 15 = 12,000 + 600 + 11,250 + 6,000 + 7,500
    // = 37,350 USD per 1e6 tokens -> 0.03735 USD = 37,350,000 nano; plus 2 searches x 0.01 = 20,000,000.
    const b = priceBreakdown(SONNET, usage(10_000, 500, { cachedInputTokens: 2_000, cacheWrite5mTokens: 3_000, cacheWrite1hTokens: 1_000, webSearchCalls: 2 }));
    expect(b.cost).toBe(57_350_000n);
    expect(b.longContext).toBe(false);
    expect(b.counts).toMatchObject({ input: 4_000n, cached_input: 2_000n, cache_write_5m: 3_000n, cache_write_1h: 1_000n, output: 500n, web_search: 2n, request: 1n });
    expect(b.costs).toMatchObject({
      input: 12_000_000n,
      cached_input: 600_000n,
      cache_write_5m: 11_250_000n,
      cache_write_1h: 6_000_000n,
      output: 7_500_000n,
      web_search: 20_000_000n,
    });
    // Saving: reads 2,000 x (3 - 0.30) = 5,400,000 nano; 5m premium 3,000 x 0.75 = 2,250,000; 1h premium 1,000 x 3 = 3,000,000.
    expect(b.cacheSaving).toBe(5_400_000n - 2_250_000n - 3_000_000n);
  });

  it("prices every token dimension at the long-context tier when all input (cache included) is above the threshold", () => {
    // 150,000 uncached + 40,000 cached + 20,000 written (5m) = 210,000 > 200,000: the tier applies.
    // 150,000 x 6 + 40,000 x 0.60 + 20,000 x 7.50 + 1,000 x 22.50 = 900,000 + 24,000 + 150,000 + 22,500 = 1,096,500 / 1e6 USD.
    const above = priceBreakdown(SONNET, usage(210_000, 1_000, { cachedInputTokens: 40_000, cacheWrite5mTokens: 20_000 }));
    expect(above.longContext).toBe(true);
    expect(above.cost).toBe(1_096_500_000n);
    // Exactly at the threshold the base prices apply: 200,000 x 3 + 1,000 x 15 = 615,000 / 1e6 USD.
    const at = priceBreakdown(SONNET, usage(200_000, 1_000));
    expect(at.longContext).toBe(false);
    expect(at.cost).toBe(615_000_000n);
  });

  it("rounds the token part once and shares the rounding nanos so the shares sum to the cost", () => {
    const model = chatModel({ pricing: { ...MODEL.pricing, inputPerMtok: 400_000n, cachedInputPerMtok: 400_000n, cacheWrite5mPerMtok: 300_000n, outputPerMtok: 400_000n } });
    // 0.4 (input) + 0.3 (5m write) + 0.4 (output) = 1.1 nano -> 2; floors 0, 0, 0; the two nanos go to the largest remainders (input, output).
    const b = priceBreakdown(model, usage(2, 1, { cacheWrite5mTokens: 1 }));
    expect(b.cost).toBe(2n);
    expect([b.costs.input, b.costs.cache_write_5m, b.costs.output]).toEqual([1n, 0n, 1n]);
  });

  it("adds the per-request fee, also to a request that consumed nothing billable", () => {
    const model = chatModel({ pricing: { ...MODEL.pricing, perRequest: 1_000_000n } });
    expect(priceBreakdown(model, usage(0, 0)).cost).toBe(1_000_000n);
    expect(priceUsage(model, usage(1000, 500, { cachedInputTokens: 200 }))).toBe(7_250_000n + 1_000_000n);
  });

  it("caps the cache parts at the input: reads first, then 5-minute, then 1-hour writes", () => {
    const counts = dimensionCounts(usage(100, 0, { cachedInputTokens: 60, cacheWrite5mTokens: 30, cacheWrite1hTokens: 50 }));
    expect(counts).toMatchObject({ cached_input: 60n, cache_write_5m: 30n, cache_write_1h: 10n, input: 0n });
  });
});

describe("projectCost: an upper bound", () => {
  it("holds projected input at the dearest input-side price, of the long-context tier above its threshold", () => {
    // Below: 1,000 x 6 (the 1h write, dearest) + 100 x 15 = 7,500 / 1e6 USD.
    expect(projectCost(admission("a", "k", 1_000, 100, { model: SONNET }))).toBe(7_500_000n);
    // Above 200,000: 250,000 x 12 + 100 x 22.50 = 3,002,250 / 1e6 USD.
    expect(projectCost(admission("a", "k", 250_000, 100, { model: SONNET }))).toBe(3_002_250_000n);
  });

  it("is never below the settled cost of an honest report of the projected tokens", () => {
    const shapes = [
      { cachedInputTokens: 0 },
      { cachedInputTokens: 1_000 },
      { cacheWrite5mTokens: 1_000 },
      { cacheWrite1hTokens: 1_000 },
      { cachedInputTokens: 300, cacheWrite5mTokens: 300, cacheWrite1hTokens: 400 },
    ];
    for (const input of [1_000, 199_999, 200_001]) {
      const hold = projectCost(admission("a", "k", input, 500, { model: SONNET }));
      for (const shape of shapes) expect(priceUsage(SONNET, usage(input, 500, shape))).toBeLessThanOrEqual(hold);
    }
  });
});
