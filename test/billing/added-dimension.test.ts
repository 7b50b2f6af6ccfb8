// The recipe of CONTRIBUTING.md, "Adding a billing dimension", on a copy of the dimension list with one
// entry added: audio input tokens, a part of the input priced per million tokens. Nothing but the entry
// tells pricing, usage normalisation, the hold and the reports about it.
import { describe, expect, it } from "vitest";
import { normalizeUsage } from "../../src/billing/billing-store.js";
import { dimensionCounts, priceBreakdown, projectCost } from "../../src/billing/pricing.js";
import { addSums, emptyTotals, usageTotalsJson } from "../../src/billing/usage-report.js";
import type { ModelConfig } from "../../src/core/catalog.js";
import { DIMENSIONS, dimensionSet, type DimensionSpec } from "../../src/core/dimensions.js";
import { plausibleUsage, type Usage } from "../../src/core/usage.js";
import { admission, chatModel, MODEL, usage } from "./support.js";

/** The one entry: audio input tokens at $40 per million (gpt-4o's audio input price). */
export const AUDIO_INPUT = {
  name: "audio_input",
  unit: "token",
  part: "input",
  counts: "tokens",
  priceKey: "audio_input_per_mtok",
  priceDefault: "input_per_mtok",
  priceField: "audioInputPerMtok",
  usageField: "audioInputTokens",
  countColumn: "audio_input_tokens",
  costColumn: "audio_input_cost_nano",
  tiered: true,
  cache: null,
} as const satisfies DimensionSpec;

export const WITH_AUDIO = dimensionSet([...DIMENSIONS, AUDIO_INPUT]);

/** MODEL ($2.50 input, $1.25 cached, $10 output per Mtok) with the audio price. */
export const AUDIO_MODEL: ModelConfig = chatModel({ id: "mock-audio", pricing: Object.assign({ audioInputPerMtok: 40_000_000_000n }, MODEL.pricing) });

/** A usage with `audio` of its input tokens being audio (a field the Usage type does not name). */
export function audioUsage(input: number, output: number, audio: number, extra: Partial<Usage> = {}): Usage {
  return Object.assign(usage(input, output, extra), { audioInputTokens: audio });
}

describe("an added input dimension, without a database", () => {
  it("is priced in the one rounding of the token part, and its share is part of the cost", () => {
    // 1,000 input of which 200 cached and 300 audio: 500 plain. 500 x 2.50 + 200 x 1.25 + 300 x 40 + 500 x 10
    // = 1,250 + 250 + 12,000 + 5,000 = 18,500 USD per 1e6 tokens = 18,500,000 nano.
    const b = priceBreakdown(AUDIO_MODEL, audioUsage(1000, 500, 300, { cachedInputTokens: 200 }), undefined, WITH_AUDIO);
    expect(b.cost).toBe(18_500_000n);
    expect(b.counts).toMatchObject({ input: 500n, cached_input: 200n, audio_input: 300n, output: 500n, request: 1n });
    expect(b.costs).toMatchObject({ input: 1_250_000n, cached_input: 250_000n, audio_input: 12_000_000n, output: 5_000_000n });
    expect(Object.values(b.costs).reduce((sum, cost) => sum + cost, 0n)).toBe(b.cost);
    // The same usage priced by the gateway's own list: audio tokens are plain input there.
    expect(priceBreakdown(AUDIO_MODEL, audioUsage(1000, 500, 300, { cachedInputTokens: 200 })).cost).toBe(7_250_000n);
  });

  it("is capped within the input after the shares before it in the list", () => {
    expect(dimensionCounts(audioUsage(100, 0, 80, { cachedInputTokens: 60 }), WITH_AUDIO)).toMatchObject({ cached_input: 60n, audio_input: 40n, input: 0n });
    expect(normalizeUsage(audioUsage(100.5, 1, 80.2, { cachedInputTokens: 60 }), WITH_AUDIO)).toMatchObject({ inputTokens: 101, cachedInputTokens: 60, audioInputTokens: 41 });
    expect(plausibleUsage(audioUsage(100, 1, -1), WITH_AUDIO)).toBeNull();
    expect(plausibleUsage(audioUsage(100, 1, 1), WITH_AUDIO)).not.toBeNull();
  });

  it("raises the hold: projected input is held at the dearest input-side price, now the audio price", () => {
    // 1,000 x 40 + 500 x 10 = 45,000 USD per 1e6 tokens.
    expect(projectCost({ ...admission("a", "k", 1000, 500), model: AUDIO_MODEL }, WITH_AUDIO)).toBe(45_000_000n);
    expect(projectCost({ ...admission("a", "k", 1000, 500), model: AUDIO_MODEL })).toBe(7_500_000n);
  });

  it("is reported with its count and cost; the input counts what is neither cache nor audio", () => {
    const totals = emptyTotals(WITH_AUDIO);
    const row = {
      requests: 2n,
      input_tokens: 1000n,
      cached_tokens: 200n,
      output_tokens: 500n,
      audio_input_tokens: 300n,
      audio_input_cost_nano: 12_000_000n,
      cost_nano: 18_500_000n,
    };
    addSums(totals, row, WITH_AUDIO);
    const json = usageTotalsJson(totals, WITH_AUDIO);
    expect(json.dimensions.audio_input).toEqual({ tokens: 300, cost_usd: "0.012" });
    expect(json.dimensions.input).toEqual({ tokens: 500, cost_usd: "0.00" });
    expect(json.dimensions.request).toEqual({ requests: 2, cost_usd: "0.00" });
  });
});
