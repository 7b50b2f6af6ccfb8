// What one upstream call consumed, in the units prices are quoted in, and the bounds every count
// must stay within before it reaches admission or settlement (and so the database's 64-bit columns).
import { DIMENSION_SET, type DimensionSet, type DimensionUsageField } from "./dimensions.js";

/** A count per dimension of src/core/dimensions.ts; absent is 0. */
export type DimensionCounts = { [F in DimensionUsageField]?: number };

export interface Usage extends DimensionCounts {
  /** Prompt tokens including the cached ones. */
  inputTokens: number;
  /** The part of inputTokens served from the provider's prompt cache. */
  cachedInputTokens: number;
  /** The parts of inputTokens written to the provider's prompt cache, by lifetime (Anthropic's 5 minutes and 1 hour). */
  cacheWrite5mTokens?: number;
  cacheWrite1hTokens?: number;
  /** Completion tokens including reasoning tokens. */
  outputTokens: number;
  /** The part of outputTokens spent on reasoning. */
  reasoningTokens: number;
  /** Provider-side web search calls (Anthropic server_tool_use.web_search_requests, OpenAI web_search_call items). */
  webSearchCalls?: number;
  images?: number;
  videoSeconds?: number;
  /** True when the upstream reported no usage and the gateway estimated it. */
  estimated: boolean;
}

export const ZERO_USAGE: Usage = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0, estimated: false };

/**
 * The output-token limit of a model that configures no max_output_tokens: max_tokens (and its
 * equivalents) above it are refused. Well above any model's real limit (100k-128k in 2025).
 */
export const MAX_OUTPUT_TOKENS_CEILING = 1_000_000;

/**
 * The largest token count an upstream can plausibly report for one call (1,000x the largest
 * context window of 2025). A count above it, negative or not a finite number is a hostile or
 * buggy upstream, not a measurement; see plausibleUsage().
 */
export const MAX_USAGE_COUNT = 1_000_000_000;

export function totalTokens(usage: Usage): number {
  return usage.inputTokens + usage.outputTokens;
}

/**
 * The count of a Usage field by name (a dimension's usageField, which a dimension list injected in
 * tests may name beyond the Usage type); undefined when absent, NaN when not a number (refused by
 * every check of a count).
 */
export function usageCount(usage: Usage, field: string): number | undefined {
  const value = (usage as object as Readonly<Record<string, unknown>>)[field];
  return value === undefined || typeof value === "number" ? value : Number.NaN;
}

function plausibleCount(value: number | undefined): boolean {
  return value === undefined || (typeof value === "number" && Number.isFinite(value) && value >= 0 && value <= MAX_USAGE_COUNT);
}

/**
 * The upstream's usage when every count is a plausible measurement, else null: the caller then bills
 * its own estimate, exactly as when the upstream reports no usage. Neither clamping to the bound (a
 * charge for a billion tokens nobody delivered) nor to 0 (free output) would be a fair charge.
 */
export function plausibleUsage(usage: Usage | null, dimensions: DimensionSet = DIMENSION_SET): Usage | null {
  if (usage === null) return null;
  if (!plausibleCount(usage.inputTokens) || !plausibleCount(usage.reasoningTokens)) return null;
  for (const field of dimensions.usageFields) if (!plausibleCount(usageCount(usage, field))) return null;
  return usage;
}
