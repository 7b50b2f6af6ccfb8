// Anthropic's native Messages API: x-api-key, an API version, and the client's own `anthropic-*`
// headers passed on byte for byte. Claude Code's gateway protocol asks for exactly that: its
// capabilities travel as anthropic-beta values (paired with body fields) and new `anthropic-*`
// headers appear with new releases, so the set is forwarded as an open list, not an allowlist.
import type { ClientHeaders, Authenticate } from "../descriptor.js";

const DEFAULT_VERSION = "2023-06-01";

/**
 * The client's `anthropic-*` headers, as they arrived. Node joins a repeated header into one value
 * (", " between them); an array (set-cookie style) is joined with "," as Anthropic reads a list.
 */
export function clientAnthropicHeaders(clientHeaders: ClientHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(clientHeaders)) {
    if (!name.startsWith("anthropic-") || value === undefined) continue;
    const text = Array.isArray(value) ? value.join(",") : value;
    if (text) out[name] = text;
  }
  return out;
}

export const authenticateAnthropic: Authenticate = (request, key, clientHeaders) => {
  const headers = request.headers;
  // The client's anthropic-version and anthropic-beta win over the provider's configured ones (the
  // client knows which API it speaks); for other names the operator's configured value stays.
  for (const [name, value] of Object.entries(clientAnthropicHeaders(clientHeaders))) {
    if (name === "anthropic-version" || name === "anthropic-beta" || headers[name] === undefined) headers[name] = value;
  }
  headers["anthropic-version"] ??= DEFAULT_VERSION;
  headers["x-api-key"] = key;
};
