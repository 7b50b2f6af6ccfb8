// Anthropic's native Messages API: x-api-key, an API version, and the client's beta flags passed on
// (Claude Code relies on several anthropic-beta values reaching the upstream).
import type { Authenticate } from "../descriptor.js";

const DEFAULT_VERSION = "2023-06-01";

export const authenticateAnthropic: Authenticate = (request, key, clientHeaders) => {
  const headers = request.headers;
  // The provider's configured version (already in headers) wins over the default, the client's over both.
  headers["anthropic-version"] ??= DEFAULT_VERSION;
  headers["x-api-key"] = key;
  const version = clientHeaders["anthropic-version"];
  if (typeof version === "string" && version) headers["anthropic-version"] = version;
  const beta = clientHeaders["anthropic-beta"];
  if (beta) headers["anthropic-beta"] = Array.isArray(beta) ? beta.join(",") : beta;
};
