// Exact pricing in nano-USD. Token prices are configured per million tokens (ModelPricing), so the
// token part of a charge is Σ(tokens × price_per_mtok) — an exact integer in nano-USD × 1e6 — followed
// by ONE ceiling division by 1,000,000. Rounding once (not per component) keeps the result exact to
// within one nano, and rounding up means a fraction of a nano is charged, never dropped: a request
// that delivered anything at a non-zero price costs at least 1 nano-USD.
// Per-image, per-video-second, per-call and per-request prices are whole nano-USD already and are
// added unrounded. Every dimension (dimensions.ts) is priced here; the token prices are the model's
// long_context tier's when the request's input (cached reads and cache writes included, as Anthropic
// and Google count it) is above the tier's threshold.
import type { ModelConfig, ModelPricing, TokenPrices } from "../core/catalog.js";
import { ceilDiv, type Nano } from "../core/money.js";
import type { Usage } from "../core/usage.js";
import { DIMENSIONS, TOKEN_DIMENSIONS, type DimensionName } from "../core/dimensions.js";
import type { AdmissionRequest } from "./types.js";

const PER_MILLION = 1_000_000n;

/** A usage count as a bigint; fractional counts (an estimate) round up, invalid ones are a bug. */
function count(value: number | undefined, field: string): bigint {
  if (value === undefined) return 0n;
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`usage.${field} must be a non-negative number, got ${value}`);
  return BigInt(Math.ceil(value));
}

/**
 * The per-image price for a variant "SIZE/QUALITY" (e.g. "1024x1024/hd"): the exact variant, then the
 * size alone, then "default". A model without any matching entry prices images at 0.
 */
export function imagePrice(model: ModelConfig, imageVariant?: string): Nano {
  const table = model.pricing.perImage;
  if (imageVariant) {
    const exact = table.get(imageVariant);
    if (exact !== undefined) return exact;
    const size = imageVariant.split("/")[0];
    const bySize = size === undefined ? undefined : table.get(size);
    if (bySize !== undefined) return bySize;
  }
  return table.get("default") ?? 0n;
}

/** What one usage costs, dimension by dimension (dimensions.ts). */
export interface PriceBreakdown {
  /** The charge, nano-USD. */
  cost: Nano;
  /** The count billed in each dimension (disjoint: input is what was neither read from nor written to the cache). */
  counts: Record<DimensionName, bigint>;
  /** Each dimension's share of cost; they sum to cost exactly (see allocateTokenCost). */
  costs: Record<DimensionName, Nano>;
  /**
   * What caching saved, nano-USD, signed: the cached reads at the input price minus what they cost,
   * minus the cache writes' premium over the input price, at the prices that applied (long context
   * included); the exact amount truncated toward zero to whole nano.
   */
  cacheSaving: bigint;
  /** True when the model's long_context tier priced the tokens. */
  longContext: boolean;
}

/**
 * The disjoint counts of a usage: cached reads, then 5-minute and 1-hour cache writes are parts of
 * inputTokens (a provider reporting more than the input is capped, in that order), "input" is the rest.
 */
export function dimensionCounts(usage: Usage): Record<DimensionName, bigint> {
  const allInput = count(usage.inputTokens, "inputTokens");
  let left = allInput;
  const part = (value: number | undefined, field: string): bigint => {
    const raw = count(value, field);
    const taken = raw > left ? left : raw;
    left -= taken;
    return taken;
  };
  const cached = part(usage.cachedInputTokens, "cachedInputTokens");
  const write5m = part(usage.cacheWrite5mTokens, "cacheWrite5mTokens");
  const write1h = part(usage.cacheWrite1hTokens, "cacheWrite1hTokens");
  const counts = {} as Record<DimensionName, bigint>;
  for (const d of DIMENSIONS) counts[d.name] = d.usageField === null ? 0n : count(usage[d.usageField], d.usageField);
  counts.cached_input = cached;
  counts.cache_write_5m = write5m;
  counts.cache_write_1h = write1h;
  counts.input = left;
  counts.request = 1n;
  return counts;
}

/** The token prices that apply to a request with this much input (all of it: cached and cache writes included). */
export function tokenPricesFor(pricing: ModelPricing, allInputTokens: bigint): { prices: TokenPrices; longContext: boolean } {
  const tier = pricing.longContext;
  if (tier !== undefined && allInputTokens > BigInt(tier.aboveInputTokens)) return { prices: tier, longContext: true };
  return { prices: pricing, longContext: false };
}

/** The cost of what an upstream call consumed, dimension by dimension (see the header for the rounding). */
export function priceBreakdown(model: ModelConfig, usage: Usage, imageVariant?: string): PriceBreakdown {
  const counts = dimensionCounts(usage);
  const { prices, longContext } = tokenPricesFor(model.pricing, count(usage.inputTokens, "inputTokens"));
  const scaled = new Array<bigint>(TOKEN_DIMENSIONS.length);
  for (let i = 0; i < scaled.length; i++) {
    const d = TOKEN_DIMENSIONS[i]!;
    scaled[i] = counts[d.name] * prices[d.priceField];
  }
  // The token part: ONE ceiling division of the exact sum (nano-USD x 1e6), shared out to the token dimensions.
  const tokenCosts = shareOut(scaled, PER_MILLION);
  const costs = {} as Record<DimensionName, Nano>;
  let cost = 0n;
  let token = 0;
  for (const d of DIMENSIONS) {
    if (d.unit === "token") costs[d.name] = tokenCosts[token++]!;
    else costs[d.name] = counts[d.name] * (d.priceField === null ? imagePrice(model, imageVariant) : model.pricing[d.priceField]);
    cost += costs[d.name];
  }
  const input = prices.inputPerMtok;
  const saving =
    counts.cached_input * (input - prices.cachedInputPerMtok) -
    counts.cache_write_5m * (prices.cacheWrite5mPerMtok - input) -
    counts.cache_write_1h * (prices.cacheWrite1hPerMtok - input);
  // BigInt division truncates toward zero.
  return { cost, counts, costs, cacheSaving: saving / PER_MILLION, longContext };
}

/**
 * ceil(Σ amounts / divisor) shared out in the amounts' order: each gets its exact share rounded down,
 * and the units left over (fewer than the number of amounts) go one each to the largest remainders,
 * ties to the earlier one. Runs on every settlement, hence arrays and no sort (n is at most 9).
 */
function shareOut(amounts: readonly bigint[], divisor: bigint): bigint[] {
  const n = amounts.length;
  const shares = new Array<bigint>(n);
  const remainders = new Array<bigint>(n);
  let sum = 0n;
  let given = 0n;
  for (let i = 0; i < n; i++) {
    const amount = amounts[i]!;
    sum += amount;
    shares[i] = amount / divisor;
    remainders[i] = amount % divisor;
    given += shares[i]!;
  }
  for (const total = ceilDiv(sum, divisor); given < total; given += 1n) {
    let largest = 0;
    for (let i = 1; i < n; i++) if (remainders[i]! > remainders[largest]!) largest = i;
    shares[largest]! += 1n;
    remainders[largest] = -1n; // a remainder gets at most one unit
  }
  return shares;
}

/**
 * The breakdown charged at most `cap` (a clamped request pays at most its hold, docs/billing.md
 * "Clamping"): each dimension's cost scaled down in proportion, the shares summing to the cap exactly.
 * The counts and the cache saving stay as reported.
 */
export function capBreakdown(breakdown: PriceBreakdown, cap: Nano): PriceBreakdown {
  if (breakdown.cost <= cap) return breakdown;
  const shares = shareOut(
    DIMENSIONS.map((d) => breakdown.costs[d.name] * cap),
    breakdown.cost,
  );
  const costs = {} as Record<DimensionName, Nano>;
  DIMENSIONS.forEach((d, i) => (costs[d.name] = shares[i]!));
  return { ...breakdown, cost: cap, costs };
}

/** The cost of what an upstream call consumed, in nano-USD (see the header for the rounding). */
export function priceUsage(model: ModelConfig, usage: Usage, imageVariant?: string): Nano {
  return priceBreakdown(model, usage, imageVariant).cost;
}

/**
 * The cost admission holds for a request, an upper bound of what an honest usage report can cost:
 * every projected input token at the dearest input-side price that could apply (input, cached read,
 * 5-minute or 1-hour cache write; of the long_context tier when the projection is above its
 * threshold), the projected output, images and seconds, and the per-request fee. Provider-side tool
 * calls cannot be projected and are not held (docs/billing.md).
 */
export function projectCost(request: AdmissionRequest): Nano {
  const { pricing } = request.model;
  const input = count(request.projectedInputTokens, "projectedInputTokens");
  const { prices } = tokenPricesFor(pricing, input);
  let dearestInput = prices.inputPerMtok;
  for (const price of [prices.cachedInputPerMtok, prices.cacheWrite5mPerMtok, prices.cacheWrite1hPerMtok]) if (price > dearestInput) dearestInput = price;
  const output = count(request.projectedOutputTokens, "projectedOutputTokens");
  const tokens = ceilDiv(input * dearestInput + output * prices.outputPerMtok, PER_MILLION);
  const images = count(request.projectedImages, "projectedImages") * imagePrice(request.model, request.imageVariant);
  const video = count(request.projectedVideoSeconds, "projectedVideoSeconds") * pricing.perVideoSecond;
  return tokens + images + video + pricing.perRequest;
}

/** Tokens a request holds against token caps and token budgets: projected input plus output. */
export function projectTokens(request: AdmissionRequest): number {
  return Math.ceil(request.projectedInputTokens) + Math.ceil(request.projectedOutputTokens);
}
