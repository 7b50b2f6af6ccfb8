// Every upstream type's capabilities, by the name a provider's `type` gives in the config: the
// registry's keys without its descriptors. The config loader validates providers and models against
// this table alone, so that loading a config (every admin command does) does not load the plans,
// translators and SDKs of every type (docs/decisions/0031-load-what-a-command-needs.md).
// registry.ts must list the same names (the compiler checks it), each descriptor carrying its entry.
import type { ProviderConfig } from "../core/catalog.js";
import { anthropicCapabilities } from "./anthropic/capabilities.js";
import { azureOpenAiCapabilities } from "./azure-openai/capabilities.js";
import { bedrockCapabilities } from "./bedrock/capabilities.js";
import { demoCapabilities } from "./demo/capabilities.js";
import type { UpstreamCapabilities } from "./descriptor.js";
import { geminiCapabilities } from "./gemini/capabilities.js";
import { googleOperationsCapabilities } from "./google-operations/capabilities.js";
import { openaiCapabilities } from "./openai/capabilities.js";

export const upstreamCapabilities = {
  openai: openaiCapabilities,
  anthropic: anthropicCapabilities,
  "google-operations": googleOperationsCapabilities,
  gemini: geminiCapabilities,
  "azure-openai": azureOpenAiCapabilities,
  bedrock: bedrockCapabilities,
  demo: demoCapabilities,
} satisfies Record<string, UpstreamCapabilities>;

type RegisteredNames = { readonly [Name in keyof typeof upstreamCapabilities]: true };

declare module "../core/catalog.js" {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the registered names become ProviderType
  interface RegisteredUpstreamTypes extends RegisteredNames {}
}

/** The registered type names, for the config schema's enum. */
export const UPSTREAM_TYPES = Object.keys(upstreamCapabilities) as [keyof typeof upstreamCapabilities, ...Array<keyof typeof upstreamCapabilities>];

/** What a provider's type can serve and take (a property lookup: the type was checked at config load). */
export function capabilitiesOf(provider: Pick<ProviderConfig, "type">): UpstreamCapabilities {
  return upstreamCapabilities[provider.type];
}
