// An upstream request addressed under a provider's base URL, with its extra headers and one key's
// credentials: the only way requests to providers are built, so every one is authenticated alike.
import type { ProviderConfig } from "../core/catalog.js";
import type { UpstreamRequest } from "./upstream-client.js";
import type { Authenticate, ClientHeaders, SignRequest } from "./descriptor.js";

const NO_CLIENT_HEADERS: ClientHeaders = {};

/**
 * A JSON request (content-type application/json; a caller sending something else replaces it before
 * signing would matter). The provider's extra headers come first, so they cannot replace the
 * credentials or the content type.
 */
export function authenticatedRequest(
  authenticate: Authenticate,
  provider: ProviderConfig,
  method: UpstreamRequest["method"],
  path: string,
  key: string,
  body?: string | Buffer,
  clientHeaders: ClientHeaders = NO_CLIENT_HEADERS,
): UpstreamRequest {
  const request = unauthenticatedRequest(provider, method, path, body);
  authenticate(request, key, clientHeaders, provider);
  return request;
}

/** authenticatedRequest for any upstream type's authenticate, signing ones included (the model and image routes). */
export async function signedRequest(
  authenticate: Authenticate | SignRequest,
  provider: ProviderConfig,
  method: UpstreamRequest["method"],
  path: string,
  key: string,
  body?: string | Buffer,
  clientHeaders: ClientHeaders = NO_CLIENT_HEADERS,
): Promise<UpstreamRequest> {
  const request = unauthenticatedRequest(provider, method, path, body);
  await authenticate(request, key, clientHeaders, provider);
  return request;
}

function unauthenticatedRequest(provider: ProviderConfig, method: UpstreamRequest["method"], path: string, body: string | Buffer | undefined): UpstreamRequest {
  return { url: provider.baseUrl + path, method, headers: { ...provider.headers, "content-type": "application/json" }, body };
}
