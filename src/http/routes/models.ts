// GET /v1/models (the key's tier only, OpenAI list shape) and GET /v1/catalog (public, cacheable).
import { DIMENSIONS, TOKEN_DIMENSIONS } from "../../billing/dimensions.js";
import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { RouteContext } from "../route-context.js";
import type { GatewayConfig, ModelConfig } from "../../config/load.js";
import { formatUsd, type Nano } from "../../core/money.js";
import { GatewayError } from "../../errors/catalogue.js";
import { authenticate } from "../../pipeline/authenticate.js";

const CREATED = Math.floor(Date.UTC(2025, 0, 1) / 1000);

function modelObject(model: ModelConfig) {
  return { id: model.id, object: "model", created: CREATED, owned_by: model.provider.name };
}

/** USD per token as an exact decimal string: nano-USD per million tokens is 1e-15 USD per token. */
export function perToken(perMtok: Nano): string {
  const digits = perMtok.toString().padStart(16, "0");
  const text = `${digits.slice(0, -15)}.${digits.slice(-15)}`.replace(/0+$/, "");
  return text.endsWith(".") ? `${text}0` : text;
}

export function catalogEntry(model: ModelConfig) {
  const p = model.pricing;
  return {
    id: model.id,
    kind: model.kind,
    context_window: model.contextWindow,
    max_output_tokens: model.maxOutputTokens,
    modalities: model.modalities,
    pricing: {
      input_per_token: perToken(p.inputPerMtok),
      cached_input_per_token: perToken(p.cachedInputPerMtok),
      output_per_token: perToken(p.outputPerMtok),
      input_per_million_tokens: formatUsd(p.inputPerMtok),
      cached_input_per_million_tokens: formatUsd(p.cachedInputPerMtok),
      output_per_million_tokens: formatUsd(p.outputPerMtok),
      per_image: Object.fromEntries([...p.perImage].map(([k, v]) => [k, formatUsd(v)])),
      per_video_second: formatUsd(p.perVideoSecond),
      // Every dimension's price under its config key (USD), and the long-context tier when there is one.
      ...Object.fromEntries(DIMENSIONS.flatMap((d) => (d.priceKey === null || d.priceField === null ? [] : [[d.priceKey, formatUsd(p[d.priceField])]]))),
      ...(p.longContext && {
        long_context: {
          above_input_tokens: p.longContext.aboveInputTokens,
          ...Object.fromEntries(TOKEN_DIMENSIONS.map((d) => [d.priceKey, formatUsd(p.longContext![d.priceField])])),
        },
      }),
    },
    tiers: model.tiers,
  };
}

function buildCatalog(config: GatewayConfig): { body: string; etag: string } {
  const body = JSON.stringify({ object: "catalog", data: [...config.models.values()].map(catalogEntry) });
  return { body, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"` };
}

export function registerModelRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const catalog = buildCatalog(ctx.config);
  const onRequest = async (request: FastifyRequest) => {
    await authenticate(request, ctx.pipeline.authCache);
  };
  const visible = (request: FastifyRequest) => [...ctx.config.models.values()].filter((m) => m.tiers.includes(request.principal.account.tier));

  app.get("/v1/models", { onRequest }, async (request) => ({ object: "list", data: visible(request).map(modelObject) }));
  app.get<{ Params: { id: string } }>("/v1/models/*", { onRequest }, async (request) => {
    const id = (request.params as Record<string, string>)["*"] ?? "";
    const model = visible(request).find((m) => m.id === id);
    if (!model) throw new GatewayError("not_found", `The model ${id} does not exist.`, { param: "model" });
    return modelObject(model);
  });
  app.get("/v1/catalog", async (request, reply) => {
    reply.header("etag", catalog.etag).header("cache-control", "public, max-age=300");
    if (request.headers["if-none-match"] === catalog.etag) return reply.code(304).send();
    return reply.header("content-type", "application/json; charset=utf-8").send(catalog.body);
  });
}
