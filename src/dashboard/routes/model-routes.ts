// The models page and the getting-started snippets: every model the signed-in account's tier
// includes (narrowed by one of its keys' allowed models with ?key_id=), with kind, limits,
// modalities and one price per billing dimension, read from the dimension list so that a new
// dimension shows up without touching this file. Another account's key answers 404 (ownKey).
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { RouteContext } from "../../http/route-context.js";
import type { ModelConfig } from "../../config/load.js";
import { DIMENSIONS, TOKEN_DIMENSIONS } from "../../core/dimensions.js";
import { formatUsd } from "../../core/money.js";
import { formatPriceFactor, modelAtPriceFactor } from "../../core/price-factor.js";
import { modelAllowed } from "../../accounts/key-policy.js";
import { upstreamOf } from "../../upstreams/registry.js";
import { idParam, parseWith } from "../../admin/validate.js";
import { modelFacts } from "../../http/routes/models.js";
import { ownKey } from "./key-routes.js";

const query = z.object({ key_id: idParam.optional() });

/** Every request schema of this file (OpenAPI is generated from these). */
export const modelRouteSchemas = { query };

/** One price of a model: the dimension, what it counts, and USD per million tokens or per unit. */
export interface PriceView {
  dimension: string;
  unit: "token" | "unit";
  counts: string;
  /** The image size (or quality) a per-image price is for; null for every other dimension. */
  variant: string | null;
  usd: string;
}

/** Every dimension in list order: token prices per million tokens, unit prices per unit, images per size. */
export function modelPrices(model: ModelConfig): PriceView[] {
  const pricing = model.pricing;
  return DIMENSIONS.flatMap((d): PriceView[] => {
    if (d.priceField === null) {
      // Images are priced from the per_image table, one price per size.
      return [...pricing.perImage].map(([variant, nano]) => ({ dimension: d.name, unit: d.unit, counts: d.counts, variant, usd: formatUsd(nano) }));
    }
    return [{ dimension: d.name, unit: d.unit, counts: d.counts, variant: null, usd: formatUsd(pricing[d.priceField]) }];
  });
}

export function dashboardModelView(model: ModelConfig) {
  const longContext = model.pricing.longContext;
  return {
    ...modelFacts(model),
    demo: upstreamOf(model.provider).capabilities.demo,
    /** A routing group's deployments may price differently; these are the model's own prices, as /v1/catalog gives them. */
    routing_group: model.group !== undefined,
    prices: modelPrices(model),
    long_context: longContext
      ? {
          above_input_tokens: longContext.aboveInputTokens,
          prices: TOKEN_DIMENSIONS.map((d) => ({ dimension: d.name, unit: d.unit, counts: d.counts, variant: null, usd: formatUsd(longContext[d.priceField]) })),
        }
      : null,
  };
}

export function registerModelRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get("/models", async (request) => {
    const { key_id: keyId } = parseWith(query, request.query, "query");
    const account = request.dashboard.account;
    const key = keyId === undefined ? null : await ownKey(ctx, account.id, keyId);
    // The same filter as GET /v1/models: the tier, then the key's allowed models.
    const config = request.snapshot.config;
    const models = [...config.models.values()].filter((m) => m.tiers.includes(account.tier) && (key === null || modelAllowed(key.allowedModels, m.id)));
    const factor = config.tierPriceFactors.get(account.tier);
    return {
      tier: account.tier,
      /** The tier's price factor ("1.5"), already in every price below; null: list prices. */
      price_factor: factor === undefined ? null : formatPriceFactor(factor),
      key: key && { id: key.id, name: key.name, prefix: key.prefix, allowed_models: key.allowedModels },
      /** server.public_url, or null: the dashboard uses the address the browser shows. */
      public_url: config.publicUrl,
      // The prices this account pays: its tier's price factor applied, as admission applies it.
      data: models.map((m) => dashboardModelView(modelAtPriceFactor(m, factor))),
    };
  });

  // What the key and workspace forms offer: each configured guardrail's name and what it does, no patterns.
  app.get("/guardrails", async (request) => ({
    data: request.snapshot.config.guardrails.list.map((g) => ({
      name: g.name,
      description: g.description,
      applies: g.applies,
      mode: g.mode,
      sides: [...(g.request ? ["request"] : []), ...(g.response ? ["response"] : [])],
    })),
  }));
}
