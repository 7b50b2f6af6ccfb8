// What a provider of type azure-openai can serve and take: read by the config loader (through
// src/upstreams/capabilities.ts) without loading the type's plans, translators and SDKs.
import type { UpstreamCapabilities } from "../descriptor.js";

export const azureOpenAiCapabilities: UpstreamCapabilities = {
  kinds: ["chat", "image", "embedding"],
  apis: ["chat", "responses", "images"],
  defaultApis: ["chat"],
  chatReasoningEffort: true,
  honorsOutputLimit: true,
  providerSettings: ["api_version"],
  demo: false,
};
