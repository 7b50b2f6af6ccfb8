// How every model route starts, written once: the model the request names, of the route's kind,
// recorded on the request's log line and checked against the account's tier and the key's policy;
// then its admission for a metered call (metered-call.ts): who asks (account and key), under which
// traffic limits, with each upstream attempt counted on the reply and the request's trace. What
// differs by route (the quantities held for, the upstream request) stays in the route.
import type { FastifyReply, FastifyRequest } from "fastify";
import { modelAllowed } from "../accounts/key-policy.js";
import type { AdmissionRequest } from "../billing/types.js";
import { budgetLimitsOf } from "../core/budget-scopes.js";
import type { ModelConfig } from "../core/catalog.js";
import { nearestName } from "../core/nearest-name.js";
import { modelAtPriceFactor } from "../core/price-factor.js";
import { checkStorableId } from "../core/stored-text.js";
import { mergeTags, parseTagsHeader, TAGS_HEADER, tagTexts } from "../core/request-tags.js";
import { GatewayError, invalidRequest } from "../errors/catalogue.js";
import { countAttempts, type MeteredRequest } from "./metered-call.js";
import type { PipelineServices } from "./services.js";
import { trafficLimitsFor } from "./traffic.js";

/**
 * The model `id` names, of `kind`, once the account's tier and the key's policy allow it, at the
 * tier's prices (its price_factor applied, src/core/price-factor.ts).
 * `checkRequest`: what the route checks against the model before the log line names it (chat: the
 * output limits).
 */
export function requestedModel(
  services: PipelineServices,
  request: FastifyRequest,
  id: string,
  kind: ModelConfig["kind"],
  checkRequest?: (model: ModelConfig) => void,
): ModelConfig {
  checkStorableId("model", id);
  // Kept for the request log before the look-up, so a model that does not exist is named there too.
  request.meter.requestedModel = id;
  const model = resolveModel(services, request, id, kind);
  checkRequest?.(model);
  request.meter.model = model.id;
  request.meter.provider = model.provider.name;
  checkTier(request, model);
  // The one place a request's prices are set: its account's tier's factor (price-factor.ts), for the hold and the settlement alike.
  return modelAtPriceFactor(model, services.config.tierPriceFactors.get(request.principal.account.tier));
}

/** What a route asks to be admitted for: the model, the route's name and what it projects to use. */
export type AdmissionProjection = Omit<AdmissionRequest, "requestId" | "accountId" | "keyId" | "limits" | "budgets" | "tags">;

/** A metered call's admission for the request's key, its attempts counted on the reply, and its trace. */
export function admissionFor(
  services: PipelineServices,
  request: FastifyRequest,
  reply: FastifyReply,
  projection: AdmissionProjection,
): Pick<MeteredRequest, "admission" | "onAttempt" | "trace"> {
  const { principal } = request;
  // A key tagged with a workspace is also held against its workspace's and its owner's member budget (ADR 0037),
  // and a tagged request against the budgets on its tags (core/request-tags.ts).
  const tags = requestTags(request);
  const workspaceBudgets = principal.workspace != null ? budgetLimitsOf(principal.workspace, principal.account.id) : [];
  const tagBudgets = services.authCache.tagBudgets.budgetsFor(principal.account.id, tags);
  const budgets = tagBudgets.length === 0 ? workspaceBudgets : [...workspaceBudgets, ...tagBudgets];
  return {
    admission: {
      requestId: request.id,
      accountId: principal.account.id,
      keyId: principal.key.id,
      limits: trafficLimitsFor(services.config, principal, projection.model.id),
      ...(budgets.length > 0 && { budgets }),
      ...(tags.length > 0 && { tags }),
      ...projection,
    },
    onAttempt: countAttempts(request, reply),
    trace: request.trace,
  };
}

/**
 * The request's tags ("key=value", sorted): its x-gateway-tags header merged with its key's default
 * tags (a default wins), recorded on the meter for the request log. Throws 400 naming the header.
 */
export function requestTags(request: FastifyRequest): string[] {
  const tags = tagTexts(mergeTags(request.principal.key.defaultTags, parseTagsHeader(request.headers[TAGS_HEADER])));
  if (tags.length > 0) request.meter.tags = tags;
  return tags;
}

const ROUTE_OF_KIND: Record<ModelConfig["kind"], string> = {
  chat: "a chat route",
  image: "/v1/images/generations",
  video: "/v1/videos",
  embedding: "/v1/embeddings",
};

function resolveModel(services: PipelineServices, request: FastifyRequest, id: string, kind: ModelConfig["kind"]): ModelConfig {
  const model = services.config.models.get(id);
  if (!model) throw unknownModel(id, usableModels(services.config.models.values(), request));
  if (model.kind !== kind) {
    const route = ROUTE_OF_KIND[model.kind];
    throw invalidRequest("model", `The model ${id} is a ${model.kind} model; use ${route}.`);
  }
  return model;
}

/** The models the request's key may use (what /v1/models lists): its account's tier, narrowed by its policy and its workspace's list. */
export function usableModels(models: Iterable<ModelConfig>, request: FastifyRequest): ModelConfig[] {
  const { account, key, workspace } = request.principal;
  const workspaceModels = workspace?.allowedModels ?? null;
  return [...models].filter((m) => m.tiers.includes(account.tier) && modelAllowed(key.allowedModels, m.id) && modelAllowed(workspaceModels, m.id));
}

/** 404 for a model id that is not there: how to list the key's models, and the nearest one the key may use. */
export function unknownModel(id: string, usable: readonly ModelConfig[]): GatewayError {
  const nearest = nearestName(
    id,
    usable.map((m) => m.id),
  );
  const hint = nearest === null ? "" : ` Did you mean ${nearest}?`;
  return new GatewayError("not_found", `The model ${id} does not exist. GET /v1/models lists the models this key can use.${hint}`, {
    param: "model",
    code: "model_not_found",
  });
}

function checkTier(request: FastifyRequest, model: ModelConfig): void {
  if (!model.tiers.includes(request.principal.account.tier)) {
    throw new GatewayError("not_supported", `The model ${model.id} is not included in the ${request.principal.account.tier} tier.`, { param: "model" });
  }
  // A routing group counts as its own id (the name the client sent), never as its deployments.
  if (!modelAllowed(request.principal.key.allowedModels, model.id)) {
    throw new GatewayError("forbidden", `The key's policy does not allow the model ${model.id}.`, { param: "model", code: "model_not_allowed_for_key" });
  }
  const workspace = request.principal.workspace;
  if (workspace != null && !modelAllowed(workspace.allowedModels, model.id)) {
    throw new GatewayError("forbidden", `The workspace ${workspace.name} (${workspace.id}) does not allow the model ${model.id}.`, {
      param: "model",
      code: "model_not_allowed_for_workspace",
    });
  }
}
