// What a provider of type gemini can serve and take: read by the config loader (through
// src/upstreams/capabilities.ts) without loading the type's plans, translators and SDKs.
import type { UpstreamCapabilities } from "../descriptor.js";

export const geminiCapabilities: UpstreamCapabilities = {
  kinds: ["chat", "embedding"],
  // `apis` names OpenAI APIs; a Gemini upstream speaks none of them.
  apis: [],
  defaultApis: [],
  chatReasoningEffort: true,
  honorsOutputLimit: true,
  providerSettings: [],
  demo: false,
};
