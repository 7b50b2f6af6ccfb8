// Exact pricing in nano-USD. Token prices are configured per million tokens (ModelPricing), so the
// token part of a charge is Σ(tokens × price_per_mtok) — an exact integer in nano-USD × 1e6 — followed
// by ONE ceiling division by 1,000,000. Rounding once (not per component) keeps the result exact to
// within one nano, and rounding up means a fraction of a nano is charged, never dropped: a request
// that delivered anything at a non-zero price costs at least 1 nano-USD.
// Per-image and per-video-second prices are whole nano-USD already and are added unrounded.
import type { ModelConfig } from "../config/catalog.js";
import { ceilDiv, type Nano } from "../core/money.js";
import type { Usage } from "../core/usage.js";
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

/** The cost of what an upstream call consumed, in nano-USD (see the header for the rounding). */
export function priceUsage(model: ModelConfig, usage: Usage, imageVariant?: string): Nano {
  const { inputPerMtok, cachedInputPerMtok, outputPerMtok, perVideoSecond } = model.pricing;
  const input = count(usage.inputTokens, "inputTokens");
  // Cached tokens are part of inputTokens; a provider reporting more cached than input is capped.
  const cachedRaw = count(usage.cachedInputTokens, "cachedInputTokens");
  const cached = cachedRaw > input ? input : cachedRaw;
  // Reasoning tokens are part of outputTokens and priced as output: not added a second time.
  const output = count(usage.outputTokens, "outputTokens");

  const scaled = (input - cached) * inputPerMtok + cached * cachedInputPerMtok + output * outputPerMtok;
  const tokens = ceilDiv(scaled, PER_MILLION);
  const images = count(usage.images, "images") * imagePrice(model, imageVariant);
  const video = count(usage.videoSeconds, "videoSeconds") * perVideoSecond;
  return tokens + images + video;
}

/**
 * The cost admission holds for a request: every projected input token priced as uncached (the upper
 * bound, since cached input is never dearer in practice), plus the projected output, images and seconds.
 */
export function projectCost(request: AdmissionRequest): Nano {
  return priceUsage(
    request.model,
    {
      inputTokens: request.projectedInputTokens,
      cachedInputTokens: 0,
      outputTokens: request.projectedOutputTokens,
      reasoningTokens: 0,
      images: request.projectedImages,
      videoSeconds: request.projectedVideoSeconds,
      estimated: true,
    },
    request.imageVariant,
  );
}

/** Tokens a request holds against token caps and token budgets: projected input plus output. */
export function projectTokens(request: AdmissionRequest): number {
  return Math.ceil(request.projectedInputTokens) + Math.ceil(request.projectedOutputTokens);
}
