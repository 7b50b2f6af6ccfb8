// GET /v1/models (the key's tier and allowed models only) and GET /v1/catalog (public, cacheable). The model list
// answers in Google's shape to Google-style callers (the genai SDK with apiVersion "v1"), in
// Anthropic's to Anthropic-style callers (Claude Code's model discovery, the Anthropic SDK), in
// OpenAI's to everyone else; docs/clients.md says how they are told apart.
import { DIMENSIONS, TOKEN_DIMENSIONS } from "../../core/dimensions.js";
import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { checkRequestBody } from "../../formats/fields.js";
import type { RouteContext } from "../route-context.js";
import type { GatewayConfig, ModelConfig } from "../../config/load.js";
import { formatUsd, type Nano } from "../../core/money.js";
import { invalidRequest } from "../../errors/catalogue.js";
import { unknownModel, usableModels } from "../../pipeline/admission.js";
import { authenticate, GOOGLE_API_KEY } from "../../pipeline/authenticate.js";
import { geminiModelId, googleModel, googleModelPage, googleVisible, isGoogleStyle } from "./gemini.js";
import { upstreamOf } from "../../upstreams/registry.js";
import { loadCompatibilitySummary, type CompatibilitySummary } from "../compatibility.js";

const CREATED_MS = Date.UTC(2025, 0, 1);
const CREATED = Math.floor(CREATED_MS / 1000);
const CREATED_AT = new Date(CREATED_MS).toISOString().replace(".000Z", "Z");

/** A model of the demo upstream type: its answers are made up by the gateway, and every listing says so. */
function isDemo(model: ModelConfig): boolean {
  return upstreamOf(model.provider).capabilities.demo;
}

function modelObject(model: ModelConfig) {
  return isDemo(model)
    ? { id: model.id, object: "model", created: CREATED, owned_by: model.provider.name, demo: true }
    : { id: model.id, object: "model", created: CREATED, owned_by: model.provider.name };
}

/** Anthropic's ModelInfo. The gateway has no display names of its own: the id is the name shown (a demo model's says so). */
function anthropicModelObject(model: ModelConfig) {
  return { type: "model", id: model.id, display_name: isDemo(model) ? `${model.id} (demo, not a real model)` : model.id, created_at: CREATED_AT };
}

/**
 * Anthropic-style: the anthropic-version header (every Anthropic SDK and Claude Code send it) or
 * the key in x-api-key (Anthropic's own header). A Bearer key without anthropic-version is OpenAI's.
 */
export function isAnthropicStyle(request: FastifyRequest): boolean {
  return request.headers["anthropic-version"] !== undefined || request.headers["x-api-key"] !== undefined;
}

const DEFAULT_PAGE = 20;
const MAX_PAGE = 1000;
const MAX_ID_LENGTH = 256;

const idParam = (name: string) =>
  z
    .string({ error: `${name} must be a single value of at most ${MAX_ID_LENGTH} characters.` })
    .max(MAX_ID_LENGTH, `${name} must be a single value of at most ${MAX_ID_LENGTH} characters.`)
    .optional();
const LIMIT_MESSAGE = `limit must be an integer from 1 to ${MAX_PAGE}.`;

/** Anthropic's list query, as checked (and described in the OpenAPI document); OpenAI-style callers' query is ignored. */
export const anthropicModelQuerySchema = z.looseObject({
  limit: z
    .string({ error: LIMIT_MESSAGE })
    .regex(/^\d{1,4}$/, LIMIT_MESSAGE)
    .refine((text) => Number(text) >= 1 && Number(text) <= MAX_PAGE, LIMIT_MESSAGE)
    .optional()
    .describe(`Anthropic-style callers: the page size, 1 to ${MAX_PAGE} (default ${DEFAULT_PAGE})`),
  after_id: idParam("after_id"),
  before_id: idParam("before_id"),
});

/** Anthropic's list page: `limit` (1..1000, default 20) after `after_id` or before `before_id`. */
export function anthropicModelPage(models: readonly ModelConfig[], query: Record<string, unknown>) {
  const checked = checkRequestBody(anthropicModelQuerySchema, query);
  const limit = checked.limit === undefined ? DEFAULT_PAGE : Number(checked.limit);
  const afterId = checked.after_id;
  const beforeId = checked.before_id;
  if (afterId !== undefined && beforeId !== undefined) throw invalidRequest("before_id", "Give after_id or before_id, not both.");
  const indexOf = (param: string, id: string) => {
    const index = models.findIndex((m) => m.id === id);
    if (index < 0) throw invalidRequest(param, `${param} names no model of this list.`);
    return index;
  };
  let start = 0;
  let end = models.length;
  if (afterId !== undefined) start = indexOf("after_id", afterId) + 1;
  if (beforeId !== undefined) end = indexOf("before_id", beforeId);
  // A page before before_id is the one that ends right before it.
  if (beforeId !== undefined) start = Math.max(0, end - limit);
  else end = Math.min(models.length, start + limit);
  const data = models.slice(start, end).map(anthropicModelObject);
  const hasMore = beforeId !== undefined ? start > 0 : end < models.length;
  return { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

/** USD per token as an exact decimal string: nano-USD per million tokens is 1e-15 USD per token. */
export function perToken(perMtok: Nano): string {
  const digits = perMtok.toString().padStart(16, "0");
  const text = `${digits.slice(0, -15)}.${digits.slice(-15)}`.replace(/0+$/, "");
  return text.endsWith(".") ? `${text}0` : text;
}

/** What a model is, as /v1/catalog and the dashboard's models page both show it. */
export function modelFacts(model: ModelConfig) {
  return { id: model.id, kind: model.kind, context_window: model.contextWindow, max_output_tokens: model.maxOutputTokens, modalities: model.modalities };
}

export function catalogEntry(model: ModelConfig) {
  const p = model.pricing;
  return {
    ...modelFacts(model),
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
    ...(isDemo(model) && { demo: true }),
  };
}

function buildCatalog(config: GatewayConfig, compatibility: CompatibilitySummary | null): { body: string; etag: string } {
  const body = JSON.stringify({ object: "catalog", data: [...config.models.values()].map(catalogEntry), compatibility });
  return { body, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"` };
}

export function registerModelRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const compatibility = loadCompatibilitySummary();
  // Built once per config snapshot (a reload builds the next one on first use).
  const catalogs = new WeakMap<GatewayConfig, { body: string; etag: string }>();
  const catalogOf = (config: GatewayConfig) => {
    let catalog = catalogs.get(config);
    if (!catalog) catalogs.set(config, (catalog = buildCatalog(config, compatibility)));
    return catalog;
  };
  catalogOf(ctx.config);
  const { authCache } = ctx.pipeline;
  const onRequest = async (request: FastifyRequest) => {
    // Refusals (a missing key included) in the envelope the caller's SDK reads.
    if (isGoogleStyle(request)) {
      request.errorShape = "google";
      return authenticate(request, authCache, "exact", GOOGLE_API_KEY);
    }
    if (isAnthropicStyle(request)) request.errorShape = "anthropic";
    await authenticate(request, authCache, "exact");
  };
  // The key's tier, narrowed by the key's allowed models (its policy, ADR 0017).
  const visible = (request: FastifyRequest) => usableModels(request.snapshot.config.models.values(), request);

  app.get("/v1/models", { onRequest }, async (request) => {
    if (isGoogleStyle(request)) return googleModelPage(googleVisible(visible(request)), request.query as Record<string, unknown>);
    if (isAnthropicStyle(request)) return anthropicModelPage(visible(request), request.query as Record<string, unknown>);
    return { object: "list", data: visible(request).map(modelObject) };
  });
  app.get<{ Params: { id: string } }>("/v1/models/*", { onRequest }, async (request) => {
    const path = (request.params as Record<string, string>)["*"] ?? "";
    const google = isGoogleStyle(request);
    // Google's clients name a model `models/{id}` too.
    const id = google ? geminiModelId(path) : path;
    const usable = google ? googleVisible(visible(request)) : visible(request);
    const model = usable.find((m) => m.id === id);
    if (!model) throw unknownModel(id, usable);
    if (google) return googleModel(model);
    return isAnthropicStyle(request) ? anthropicModelObject(model) : modelObject(model);
  });
  app.get("/v1/catalog", async (request, reply) => {
    const catalog = catalogOf(request.snapshot.config);
    reply.header("etag", catalog.etag).header("cache-control", "public, max-age=300");
    if (request.headers["if-none-match"] === catalog.etag) return reply.code(304).send();
    return reply.header("content-type", "application/json; charset=utf-8").send(catalog.body);
  });
}
