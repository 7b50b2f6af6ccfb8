// A model's `deployments` (docs/configuration.md, "Routing groups"): each becomes a view of the model
// with its own provider, upstream model, price and window, checked here with errors naming the field.
// A model without deployments keeps the single-provider form and gets no group (a group of one).
import type { Deployment, ModelConfig, ModelPricing, ProviderConfig, RoutingGroup } from "../core/catalog.js";
import type { ModelFileEntry } from "./schema.js";
import { capabilitiesOf } from "../upstreams/capabilities.js";

export interface GroupContext {
  providers: ReadonlyMap<string, ProviderConfig>;
  fail: (field: string, message: string) => never;
  price: (pricing: ModelFileEntry["pricing"], at: string) => ModelPricing;
}

/** The provider field of the single-provider form, or of the first deployment; checks the form. */
export function baseProviderOf(m: ModelFileEntry, at: string, context: GroupContext): ProviderConfig {
  const { fail, providers } = context;
  if (m.deployments === undefined) {
    if (m.routing !== undefined) fail(`${at}.routing`, "applies only to a model that lists deployments");
    const name = m.provider ?? fail(`${at}.provider`, "required (or list deployments instead)");
    return providers.get(name) ?? fail(`${at}.provider`, `provider "${name}" is not defined under providers`);
  }
  if (m.provider !== undefined) fail(`${at}.provider`, "a model lists either provider or deployments, not both");
  if (m.kind !== "chat") fail(`${at}.deployments`, `routing groups serve chat models only (this model is kind ${m.kind})`);
  const first = m.deployments[0]!.provider;
  return providers.get(first) ?? fail(`${at}.deployments[0].provider`, `provider "${first}" is not defined under providers`);
}

/** The routing group of a model that lists deployments; `base` is the model built from its other fields. */
export function buildRoutingGroup(m: ModelFileEntry, at: string, base: ModelConfig, context: GroupContext): RoutingGroup | undefined {
  if (m.deployments === undefined) return undefined;
  const { fail, providers } = context;
  const strategy = m.routing?.strategy ?? "ordered";
  const contextFallback = m.routing?.context_fallback ?? false;
  const firstIndexOf = new Map<string, number>();
  const deployments: Deployment[] = m.deployments.map((d, j) => {
    const field = `${at}.deployments[${j}]`;
    const earlier = firstIndexOf.get(d.name);
    if (earlier !== undefined) fail(`${field}.name`, `duplicate deployment name "${d.name}" (also deployments[${earlier}])`);
    firstIndexOf.set(d.name, j);
    const provider = providers.get(d.provider) ?? fail(`${field}.provider`, `provider "${d.provider}" is not defined under providers`);
    const kinds = capabilitiesOf(provider).kinds;
    if (!kinds.includes(m.kind)) fail(`${field}.provider`, `the provider "${d.provider}" (type ${provider.type}) cannot serve ${m.kind} models`);
    if (d.weight !== undefined && strategy !== "weighted") fail(`${field}.weight`, `weights apply only to routing.strategy: weighted (this model's strategy is ${strategy})`);
    const contextWindow = d.context_window ?? base.contextWindow;
    if (contextFallback && contextWindow === null) fail(`${field}.context_window`, "required with routing.context_fallback (here or on the model)");
    const model: ModelConfig = {
      ...base,
      provider,
      upstreamModel: d.upstream_model ?? base.upstreamModel,
      contextWindow,
      pricing: d.pricing ? context.price(d.pricing, `${field}.pricing`) : base.pricing,
      deployment: d.name,
    };
    return {
      name: d.name,
      model,
      weight: d.weight ?? 1,
      priority: d.priority,
      bit: 1 << j,
      breakerScope: `deployment:${m.id}/${d.name}`,
      ...(d.health_check && { healthCheck: { intervalMs: d.health_check.interval_s * 1000, timeoutMs: d.health_check.timeout_ms } }),
    };
  });
  return { strategy, contextFallback, deployments };
}

/**
 * The model as served while some providers are disabled: a group keeps its deployments on enabled
 * providers (each keeps its bit and breaker scope; the first left gives the base provider); null
 * when none is left to route to. Disabled providers stay in the catalogue (a video task in flight
 * there can still be polled); only routing skips them.
 */
export function servedModel(model: ModelConfig, disabledProviders: ReadonlySet<string>): ModelConfig | null {
  if (disabledProviders.size === 0) return model;
  if (model.group === undefined) return disabledProviders.has(model.provider.name) ? null : model;
  const deployments = model.group.deployments.filter((d) => !disabledProviders.has(d.model.provider.name));
  if (deployments.length === model.group.deployments.length) return model;
  if (deployments.length === 0) return null;
  return { ...model, provider: deployments[0]!.model.provider, group: { ...model.group, deployments } };
}
