// What a provider of type bedrock can serve and take: read by the config loader (through
// src/upstreams/capabilities.ts) without loading the type's plans, translators and SDKs.
import type { UpstreamCapabilities } from "../descriptor.js";

export const bedrockCapabilities: UpstreamCapabilities = {
  kinds: ["chat"],
  // `apis` names OpenAI APIs; Bedrock speaks none of them.
  apis: [],
  defaultApis: [],
  // Claude models take it as thinking (additionalModelRequestFields); for others it is dropped with a warning.
  chatReasoningEffort: true,
  honorsOutputLimit: true,
  providerSettings: ["region"],
  demo: false,
};
