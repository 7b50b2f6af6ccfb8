import type { ProviderType } from "../config/load.js";
import { anthropicAdapter } from "./anthropic.js";
import type { ProviderAdapter } from "./contract.js";
import { googleAdapter } from "./google.js";
import { openaiAdapter } from "./openai.js";

export function adapterFor(type: ProviderType): ProviderAdapter {
  switch (type) {
    case "openai":
      return openaiAdapter;
    case "google-operations":
      return googleAdapter;
    case "anthropic":
      return anthropicAdapter;
  }
}
