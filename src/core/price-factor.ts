// Per-tier price factors (docs/billing.md, "Tier price factors"; ADR 0035): a tier may carry
// `price_factor`, a decimal string such as "1.5" or "0.8" with at most 6 decimals, kept as an exact
// integer of millionths (ppm). An account of that tier pays the list price times the factor. The
// rule, exact and in ONE place: the tier's price list is every price of the model (each token price
// per million tokens, each unit and per-image price, the long_context tier's, each deployment's)
// times the factor, each rounded UP to a whole nano-USD; the tier's requests are then priced from
// that list like any other (src/billing/pricing.ts: holds, clamping and settlement alike). A price
// per million tokens in nano-USD resolves 1e-15 USD per token, so the one rounding per price is far
// below a nano on any charge, and a factor with a whole number of millionths of a list price (1.5 x
// 2.00 USD) is exact. The ledger row records the factor (price_factor_ppm; null: no factor).
import type { LongContextTier, ModelConfig, ModelPricing } from "./catalog.js";
import { ceilDiv, type Nano } from "./money.js";

/** One, in millionths. */
export const PRICE_FACTOR_ONE = 1_000_000;
/** The dearest factor a tier may carry (a bound against a typo of a few zeros). */
export const MAX_PRICE_FACTOR_PPM = 1_000 * PRICE_FACTOR_ONE;

const FACTOR = /^(\d{1,4})(?:\.(\d{1,6}))?$/;

/** "1.5" -> 1_500_000; null when it is not a decimal with at most 6 decimals above 0 and at most 1000. */
export function parsePriceFactor(text: string): number | null {
  const match = FACTOR.exec(text.trim());
  if (!match) return null;
  const ppm = Number(match[1]) * PRICE_FACTOR_ONE + Number((match[2] ?? "").padEnd(6, "0"));
  return ppm > 0 && ppm <= MAX_PRICE_FACTOR_PPM ? ppm : null;
}

/** 1_500_000 -> "1.5": the factor as a decimal string, no trailing zeros. */
export function formatPriceFactor(ppm: number): string {
  const whole = Math.floor(ppm / PRICE_FACTOR_ONE);
  const fraction = String(ppm % PRICE_FACTOR_ONE)
    .padStart(6, "0")
    .replace(/0+$/, "");
  return fraction === "" ? String(whole) : `${whole}.${fraction}`;
}

/** A price times the factor, rounded up to a whole nano-USD. */
export function scalePrice(price: Nano, ppm: number): Nano {
  return ceilDiv(price * BigInt(ppm), BigInt(PRICE_FACTOR_ONE));
}

function scaleFields<T extends object>(prices: T, ppm: number): T {
  const scaled: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(prices)) scaled[field] = typeof value === "bigint" ? scalePrice(value, ppm) : value;
  return scaled as T;
}

function scalePricing(pricing: ModelPricing, ppm: number): ModelPricing {
  const { perImage, longContext, ...rest } = pricing;
  const scaled: ModelPricing = { ...scaleFields(rest, ppm), perImage: new Map([...perImage].map(([variant, price]) => [variant, scalePrice(price, ppm)])) };
  if (longContext !== undefined) scaled.longContext = scaleFields<LongContextTier>(longContext, ppm);
  return scaled;
}

const atFactor = new WeakMap<ModelConfig, Map<number, ModelConfig>>();

/**
 * The model as a tier with this factor buys it: its prices and its deployments' scaled, the factor
 * recorded on it (ModelConfig.priceFactorPpm) for the ledger. `ppm` undefined: the model as it is.
 * Built once per model and factor (a config snapshot's models are immutable).
 */
export function modelAtPriceFactor(model: ModelConfig, ppm: number | undefined): ModelConfig {
  if (ppm === undefined) return model;
  let byFactor = atFactor.get(model);
  if (byFactor === undefined) atFactor.set(model, (byFactor = new Map<number, ModelConfig>()));
  let scaled = byFactor.get(ppm);
  if (scaled === undefined) {
    scaled = { ...model, pricing: scalePricing(model.pricing, ppm), priceFactorPpm: ppm };
    if (model.group !== undefined) {
      scaled.group = { ...model.group, deployments: model.group.deployments.map((d) => ({ ...d, model: modelAtPriceFactor(d.model, ppm) })) };
    }
    byFactor.set(ppm, scaled);
  }
  return scaled;
}
