// Every upstream type the gateway speaks, by the name a provider's `type` gives in the config.
// Adding one is a folder under src/upstreams/ and a line here (CONTRIBUTING.md, "Adding an upstream
// type"); the config's `type` values, and the ProviderType of the catalog, come from these keys.
import type { ProviderConfig } from "../core/catalog.js";
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
} satisfies Record<string, UpstreamDescriptor>;

type RegisteredNames = { readonly [Name in keyof typeof upstreams]: true };

declare module "../core/catalog.js" {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the registry's names become ProviderType
  interface RegisteredUpstreamTypes extends RegisteredNames {}
}

/** The registered type names, for the config schema's enum. */
export const UPSTREAM_TYPES = Object.keys(upstreams) as [keyof typeof upstreams, ...Array<keyof typeof upstreams>];

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
