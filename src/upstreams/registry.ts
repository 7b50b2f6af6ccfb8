// Every upstream type the gateway speaks, by the name a provider's `type` gives in the config.
// Adding one is a folder under src/upstreams/ and a line here and in capabilities.ts (CONTRIBUTING.md,
// "Adding an upstream type"); the config's `type` values, and the ProviderType of the catalog, come
// from capabilities.ts's keys, and this table must have exactly those (the compiler checks it).
import type { ProviderConfig, ProviderType } from "../core/catalog.js";
import { GatewayError } from "../errors/catalogue.js";
import { anthropicUpstream } from "./anthropic/index.js";
import { azureOpenAiUpstream } from "./azure-openai/index.js";
import { bedrockUpstream } from "./bedrock/index.js";
import { demoUpstream } from "./demo/index.js";
import type { PlanBuilder, UpstreamDescriptor } from "./descriptor.js";
import { geminiUpstream } from "./gemini/index.js";
import { googleOperationsUpstream } from "./google-operations/index.js";
import { openaiUpstream } from "./openai/index.js";

export const upstreams = {
  openai: openaiUpstream,
  anthropic: anthropicUpstream,
  "google-operations": googleOperationsUpstream,
  gemini: geminiUpstream,
  "azure-openai": azureOpenAiUpstream,
  bedrock: bedrockUpstream,
  demo: demoUpstream,
} satisfies Record<ProviderType, UpstreamDescriptor>;

export { UPSTREAM_TYPES } from "./capabilities.js";

/** The descriptor of a provider's type (a property lookup: the type was checked at config load). */
export function upstreamOf(provider: ProviderConfig): UpstreamDescriptor {
  return upstreams[provider.type];
}

/** The Chat plan of the model's upstream; a model whose upstream has none cannot be on a chat route (config load refuses it). */
export function chatPlanOf(provider: ProviderConfig): PlanBuilder {
  const plan = upstreams[provider.type].chatPlan;
  if (plan === null) throw new GatewayError("provider_error", `The provider ${provider.name} serves no chat models.`);
  return plan;
}
