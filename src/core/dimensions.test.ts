import { describe, expect, it } from "vitest";
import { DIMENSION_SET, DIMENSIONS, dimensionSet, type DimensionSpec } from "./dimensions.js";

describe("dimensionSet", () => {
  it("derives the parts, the cache roles and the ledger columns from the list", () => {
    const names = (list: readonly { name: string }[]) => list.map((d) => d.name);
    expect(names(DIMENSION_SET.parts.input.shares)).toEqual(["cached_input", "cache_write_5m", "cache_write_1h"]);
    expect(DIMENSION_SET.parts.input.rest.name).toBe("input");
    expect(names(DIMENSION_SET.parts.output.shares)).toEqual([]);
    expect(DIMENSION_SET.parts.output.rest.name).toBe("output");
    expect(names(DIMENSION_SET.units)).toEqual(["web_search", "request", "image", "video_second"]);
    expect(names(DIMENSION_SET.cacheReads)).toEqual(["cached_input"]);
    expect(names(DIMENSION_SET.cacheWrites)).toEqual(["cache_write_5m", "cache_write_1h"]);
    expect(DIMENSION_SET.ledgerColumns.slice(0, 5)).toEqual(["cache_write_5m_tokens", "cache_write_1h_tokens", "web_search_calls", "images", "video_seconds"]);
    expect(DIMENSION_SET.ledgerColumns.at(-1)).toBe("cache_saving_nano");
    expect(dimensionSet(DIMENSIONS)).toBe(DIMENSION_SET);
  });

  it("refuses a list that breaks its rules", () => {
    const input = DIMENSIONS[0];
    const withEntry = (entry: DimensionSpec) => [...DIMENSIONS, entry];
    expect(() => dimensionSet(withEntry({ ...input, name: "input_again", costColumn: "other_cost_nano" }))).toThrow(/exactly one dimension counting its rest/);
    expect(() => dimensionSet(withEntry({ ...input, costColumn: "other_cost_nano" }))).toThrow(/two dimensions have the name input/);
    expect(() => dimensionSet(withEntry({ ...input, name: "audio", usageField: "audioTokens", costColumn: "audio_cost_nano", part: "output", cache: "read" }))).toThrow(
      /only a share of the input/,
    );
    expect(() => dimensionSet([...DIMENSIONS.filter((d) => d.name !== "output")])).toThrow(/the output needs exactly one/);
  });
});
