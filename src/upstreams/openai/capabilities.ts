// What a provider of type openai can serve and take: read by the config loader (through
// src/upstreams/capabilities.ts) without loading the type's plans, translators and SDKs.
import type { UpstreamCapabilities } from "../descriptor.js";

export const openaiCapabilities: UpstreamCapabilities = {
  kinds: ["chat", "image", "video", "embedding"],
  apis: ["chat", "responses", "images", "videos"],
  defaultApis: ["chat"],
  chatReasoningEffort: true,
  // OpenAI-compatible servers of every make: the gateway does not rely on them to stop at max_tokens.
  honorsOutputLimit: false,
  providerSettings: [],
  demo: false,
};
