// What a provider of type google-operations can serve and take: read by the config loader (through
// src/upstreams/capabilities.ts) without loading the type's plans, translators and SDKs.
import type { UpstreamCapabilities } from "../descriptor.js";

export const googleOperationsCapabilities: UpstreamCapabilities = {
  kinds: ["video"],
  apis: [],
  defaultApis: [],
  chatReasoningEffort: false,
  honorsOutputLimit: true,
  providerSettings: [],
  demo: false,
};
