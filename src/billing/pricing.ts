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
import { usageCount, type Usage } from "../core/usage.js";
import { DIMENSION_SET, TOKEN_PART_NAMES, TOKEN_PARTS, type DimensionSet, type DimensionValues } from "../core/dimensions.js";
import type { AdmissionRequest } from "./types.js";

const PER_MILLION = 1_000_000n;

/** A usage count as a bigint; fractional counts (an estimate) round up, invalid ones are a bug. */
function count(value: number | undefined, field: string): bigint {
  if (value === undefined) return 0n;
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`usage.${field} must be a non-negative number, got ${value}`);
  return BigInt(Math.ceil(value));
}

/** A price by its ModelPricing field (a dimension's priceField); a price the list names and the model lacks is a bug, not 0. */
function priceOf(prices: TokenPrices | ModelPricing, field: string): Nano {
  const fields: Readonly<Record<string, unknown>> = prices;
  const price = fields[field];
  if (typeof price !== "bigint") throw new Error(`the model's pricing has no ${field}`);
  return price;
}

/** An admission request's projection by field name (TOKEN_PARTS, a unit dimension's projectedField). */
function projected(request: AdmissionRequest, field: string): number | undefined {
  const value = (request as object as Readonly<Record<string, unknown>>)[field];
  return value === undefined || typeof value === "number" ? value : Number.NaN;
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
  counts: DimensionValues<bigint>;
  /** Each dimension's share of cost; they sum to cost exactly (see allocateTokenCost). */
  costs: DimensionValues<Nano>;
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
 * The disjoint counts of a usage: each token part's dimensions (dimensions.ts) take their counts out of
 * the part's total in list order (for the input: cached reads, then 5-minute and 1-hour cache writes; a
 * provider reporting more than the total is capped), and the part's rest dimension ("input", "output")
 * counts what they leave. A unit dimension without a Usage field counts 1 (the request).
 */
export function dimensionCounts(usage: Usage, dimensions: DimensionSet = DIMENSION_SET): DimensionValues<bigint> {
  const counts: Record<string, bigint> = {};
  for (const part of TOKEN_PART_NAMES) {
    const { shares, rest } = dimensions.parts[part];
    const total = TOKEN_PARTS[part].usageField;
    let left = count(usageCount(usage, total), total);
    for (const d of shares) {
      const field = d.usageField!;
      const raw = count(usageCount(usage, field), field);
      counts[d.name] = raw > left ? left : raw;
      left -= counts[d.name]!;
    }
    counts[rest.name] = left;
  }
  for (const d of dimensions.units) counts[d.name] = d.usageField === null ? 1n : count(usageCount(usage, d.usageField), d.usageField);
  return inListOrder(counts, dimensions);
}

/** The values in the list's order (the order reports and the ledger show them), every dimension present. */
function inListOrder<T>(values: Readonly<Record<string, T>>, dimensions: DimensionSet): DimensionValues<T> {
  const ordered: Record<string, T> = {};
  for (const d of dimensions.list) ordered[d.name] = values[d.name]!;
  // Every name of the list is a key; a list injected in tests extends DIMENSIONS.
  return ordered as DimensionValues<T>;
}

/** The token prices that apply to a request with this much input (all of it: cached and cache writes included). */
export function tokenPricesFor(pricing: ModelPricing, allInputTokens: bigint): { prices: TokenPrices; longContext: boolean } {
  const tier = pricing.longContext;
  if (tier !== undefined && allInputTokens > BigInt(tier.aboveInputTokens)) return { prices: tier, longContext: true };
  return { prices: pricing, longContext: false };
}

/** The cost of what an upstream call consumed, dimension by dimension (see the header for the rounding). */
export function priceBreakdown(model: ModelConfig, usage: Usage, imageVariant?: string, dimensions: DimensionSet = DIMENSION_SET): PriceBreakdown {
  const counts = dimensionCounts(usage, dimensions);
  const { prices, longContext } = tokenPricesFor(model.pricing, count(usage.inputTokens, "inputTokens"));
  const tokens = dimensions.tokens;
  const scaled = new Array<bigint>(tokens.length);
  for (let i = 0; i < scaled.length; i++) scaled[i] = counts[tokens[i]!.name]! * priceOf(prices, tokens[i]!.priceField);
  // The token part: ONE ceiling division of the exact sum (nano-USD x 1e6), shared out to the token dimensions.
  const tokenCosts = shareOut(scaled, PER_MILLION);
  const costs: Record<string, Nano> = {};
  let cost = 0n;
  tokens.forEach((d, i) => (costs[d.name] = tokenCosts[i]!));
  for (const d of dimensions.units) costs[d.name] = counts[d.name]! * (d.priceField === null ? imagePrice(model, imageVariant) : priceOf(model.pricing, d.priceField));
  for (const d of dimensions.list) cost += costs[d.name]!;
  // Cache reads save (input price - their price) per token, cache writes cost (their price - input price) more.
  const input = priceOf(prices, dimensions.parts.input.rest.priceField);
  let saving = 0n;
  for (const d of [...dimensions.cacheReads, ...dimensions.cacheWrites]) saving += counts[d.name]! * (input - priceOf(prices, d.priceField));
  // BigInt division truncates toward zero.
  return { cost, counts, costs: inListOrder(costs, dimensions), cacheSaving: saving / PER_MILLION, longContext };
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
export function capBreakdown(breakdown: PriceBreakdown, cap: Nano, dimensions: DimensionSet = DIMENSION_SET): PriceBreakdown {
  if (breakdown.cost <= cap) return breakdown;
  const shares = shareOut(
    dimensions.list.map((d) => breakdown.costs[d.name]! * cap),
    breakdown.cost,
  );
  const costs: Record<string, Nano> = {};
  dimensions.list.forEach((d, i) => (costs[d.name] = shares[i]!));
  return { ...breakdown, cost: cap, costs: inListOrder(costs, dimensions) };
}

/**
 * A charge that is not priced from usage: a response-cache hit (ADR 0044). No tokens or units are
 * counted but the request itself, and the whole cost is the per-request dimension's share, so that a
 * row's cost is still the sum of its dimensions' costs and no token total counts the answer twice.
 */
export function flatBreakdown(cost: Nano, dimensions: DimensionSet = DIMENSION_SET): PriceBreakdown {
  const perRequest = dimensions.units.find((d) => d.usageField === null);
  if (perRequest === undefined) throw new Error("the dimension list has no per-request dimension for a flat charge");
  const counts: Record<string, bigint> = {};
  const costs: Record<string, Nano> = {};
  for (const d of dimensions.list) {
    counts[d.name] = d === perRequest ? 1n : 0n;
    costs[d.name] = d === perRequest ? cost : 0n;
  }
  return { cost, counts: inListOrder(counts, dimensions), costs: inListOrder(costs, dimensions), cacheSaving: 0n, longContext: false };
}

/** The cost of what an upstream call consumed, in nano-USD (see the header for the rounding). */
export function priceUsage(model: ModelConfig, usage: Usage, imageVariant?: string, dimensions: DimensionSet = DIMENSION_SET): Nano {
  return priceBreakdown(model, usage, imageVariant, dimensions).cost;
}

/**
 * The cost admission holds for a request, an upper bound of what an honest usage report can cost: each
 * token part's projection (input, output) at the dearest price of that part's dimensions that could
 * apply (for the input: input, cached read, 5-minute or 1-hour cache write; of the long_context tier
 * when the projected input is above its threshold), each unit dimension's projection at its price
 * (images, seconds), and the per-request fee. Provider-side tool calls cannot be projected and are not
 * held (docs/billing.md).
 */
export function projectCost(request: AdmissionRequest, dimensions: DimensionSet = DIMENSION_SET): Nano {
  const { pricing } = request.model;
  const input = count(projected(request, TOKEN_PARTS.input.projectedField), TOKEN_PARTS.input.projectedField);
  const { prices } = tokenPricesFor(pricing, input);
  let scaled = 0n;
  for (const part of TOKEN_PART_NAMES) {
    const field = TOKEN_PARTS[part].projectedField;
    let dearest = 0n;
    for (const d of dimensions.parts[part].all) {
      const price = priceOf(prices, d.priceField);
      if (price > dearest) dearest = price;
    }
    scaled += count(projected(request, field), field) * dearest;
  }
  let cost = ceilDiv(scaled, PER_MILLION);
  for (const d of dimensions.units) {
    const units = d.usageField === null ? 1n : d.projectedField === null ? 0n : count(projected(request, d.projectedField), d.projectedField);
    if (units > 0n) cost += units * (d.priceField === null ? imagePrice(request.model, request.imageVariant) : priceOf(pricing, d.priceField));
  }
  return cost;
}

/** Tokens a request holds against token caps and token budgets: the projected input plus output. */
export function projectTokens(request: AdmissionRequest): number {
  let tokens = 0;
  for (const part of TOKEN_PART_NAMES) tokens += Math.ceil(projected(request, TOKEN_PARTS[part].projectedField) ?? 0);
  return tokens;
}
