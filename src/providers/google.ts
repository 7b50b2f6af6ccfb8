// Google's Gemini API (long-running video operations): x-goog-api-key.
import type { ProviderAdapter } from "./contract.js";

export const googleAdapter: ProviderAdapter = {
  target(provider, path, key) {
    return { url: provider.baseUrl + path, headers: { ...provider.headers, "x-goog-api-key": key, "content-type": "application/json" } };
  },
};
