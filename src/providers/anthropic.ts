// Anthropic's native Messages API: x-api-key, an API version, and the client's beta flags passed on
// (Claude Code relies on several anthropic-beta values reaching the upstream).
import type { ProviderAdapter } from "./contract.js";

const DEFAULT_VERSION = "2023-06-01";

export const anthropicAdapter: ProviderAdapter = {
  target(provider, path, key, clientHeaders) {
    const headers: Record<string, string> = {
      "anthropic-version": DEFAULT_VERSION,
      ...provider.headers,
      "x-api-key": key,
      "content-type": "application/json",
    };
    const version = clientHeaders["anthropic-version"];
    if (typeof version === "string" && version) headers["anthropic-version"] = version;
    const beta = clientHeaders["anthropic-beta"];
    if (beta) headers["anthropic-beta"] = Array.isArray(beta) ? beta.join(",") : beta;
    return { url: provider.baseUrl + path, headers };
  },
};
