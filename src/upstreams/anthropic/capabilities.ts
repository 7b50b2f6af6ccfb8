// What a provider of type anthropic can serve and take: read by the config loader (through
// src/upstreams/capabilities.ts) without loading the type's plans, translators and SDKs.
import type { UpstreamCapabilities } from "../descriptor.js";

export const anthropicCapabilities: UpstreamCapabilities = {
  kinds: ["chat"],
  // `apis` names OpenAI APIs; an Anthropic upstream speaks none of them.
  apis: [],
  defaultApis: [],
  // The Chat plan turns reasoning_effort into extended thinking (a budget by effort).
  chatReasoningEffort: true,
  honorsOutputLimit: true,
  providerSettings: [],
  demo: false,
};
