// What a provider of type demo can serve and take: read by the config loader (through
// src/upstreams/capabilities.ts) without loading the type's plans, translators and SDKs.
import type { UpstreamCapabilities } from "../descriptor.js";

export const demoCapabilities: UpstreamCapabilities = {
  kinds: ["chat"],
  apis: ["chat"],
  defaultApis: ["chat"],
  chatReasoningEffort: false,
  // Its answers stop at max_tokens / max_completion_tokens (finish_reason "length").
  honorsOutputLimit: true,
  providerSettings: [],
  demo: true,
};
