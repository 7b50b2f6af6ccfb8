// OpenAI and every OpenAI-compatible vendor: base_url + path, Bearer key.
import type { ProviderAdapter } from "./contract.js";

export const openaiAdapter: ProviderAdapter = {
  target(provider, path, key) {
    return {
      url: provider.baseUrl + path,
      headers: { ...provider.headers, authorization: `Bearer ${key}`, "content-type": "application/json" },
    };
  },
};
