// Stage 1, authenticate: the credential from `Authorization: Bearer` or `x-api-key` (on Google's
// routes also `x-goog-api-key` or `?key=`), its key and account (cached), then the account's status.
// Runs before the body is read.
import type { FastifyRequest } from "fastify";
import { hashApiKey, isWellFormedApiKey } from "../core/api-keys.js";
import { keyExpired, networkAllowed } from "../accounts/key-policy.js";
import { accountSuspended, GatewayError } from "../errors/catalogue.js";
import type { AuthCache, Principal } from "./auth-cache.js";

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal;
  }
}

/**
 * Refuses a credential header sent more than once. Node keeps only the first `Authorization` (and
 * joins repeated `x-api-key` values), so a proxy or log that reads the last one would disagree with
 * the gateway about who is calling: the request is refused instead.
 */
export function refuseRepeatedCredentialHeaders(request: FastifyRequest, names: readonly string[] = CREDENTIAL_HEADERS): void {
  const raw = request.raw.rawHeaders;
  for (const name of names) {
    let seen = 0;
    for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name) seen++;
    if (seen > 1) throw new GatewayError("auth_error", `The \`${name}\` header is sent ${seen} times; send one credential in one header.`);
  }
}

const CREDENTIAL_HEADERS = ["authorization", "x-api-key"] as const;

/**
 * The raw key from `Authorization: Bearer` or `x-api-key`: null when neither is sent, "" for an
 * Authorization header that is not a bearer token. Both headers may carry the same key; two
 * different keys are refused, so that no proxy or log that reads the other header is misled.
 */
export function credentialOf(request: FastifyRequest): string | null {
  refuseRepeatedCredentialHeaders(request);
  const authorization = request.headers.authorization;
  const bearer = typeof authorization === "string" && authorization.length > 0 ? (/^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] ?? "") : null;
  const apiKeyHeader = request.headers["x-api-key"];
  const apiKey = typeof apiKeyHeader === "string" ? apiKeyHeader.trim() : null;
  if (bearer !== null && apiKey !== null && bearer !== apiKey) {
    throw new GatewayError("auth_error", "The `Authorization` and `x-api-key` headers carry different credentials; send one key, in one header or the same in both.");
  }
  return bearer ?? apiKey;
}

/** Where a route family reads its key from, and what a request without one is told. */
export interface CredentialReader {
  read(request: FastifyRequest): string | null;
  missing: string;
}

export const BEARER_OR_API_KEY: CredentialReader = {
  read: credentialOf,
  missing: "Provide an API key as `Authorization: Bearer <key>` or `x-api-key: <key>`.",
};

/**
 * Google's clients (the @google/genai SDK, Gemini CLI) send the key in `x-goog-api-key`, older ones
 * and curl examples as `?key=`; Bearer and `x-api-key` work too. Several places may carry the same
 * key; two different keys are refused, as in credentialOf. The query never reaches a log: the
 * gateway logs paths without their query.
 */
export const GOOGLE_API_KEY: CredentialReader = {
  read(request) {
    refuseRepeatedCredentialHeaders(request, ["x-goog-api-key"]);
    const header = request.headers["x-goog-api-key"];
    const query = (request.query as Record<string, unknown> | undefined)?.key;
    if (query !== undefined && typeof query !== "string") throw new GatewayError("auth_error", "The `key` query parameter is given more than once; send one key.");
    const found = [typeof header === "string" ? header.trim() : null, query ?? null, credentialOf(request)].filter((key): key is string => key !== null);
    if (found.some((key) => key !== found[0])) {
      throw new GatewayError("auth_error", "The request carries different credentials (x-goog-api-key, ?key=, Authorization or x-api-key); send one key.");
    }
    return found[0] ?? null;
  },
  missing: "Provide an API key as `x-goog-api-key: <key>`, `?key=<key>` or `Authorization: Bearer <key>`.",
};

/**
 * How a route reads the key's standing: `cached` for the routes that bill (admission reads the key's
 * and the account's status again in its transaction, so the cache only saves a read), `exact` for
 * every other route, which reads both afresh so that no worker or process serves a suspended
 * account or a revoked key from its cache.
 */
export type Standing = "cached" | "exact";

export async function authenticate(request: FastifyRequest, cache: AuthCache, standing: Standing, credentials: CredentialReader = BEARER_OR_API_KEY): Promise<Principal> {
  const raw = credentials.read(request);
  if (raw === null) throw new GatewayError("auth_error", credentials.missing);
  if (!isWellFormedApiKey(raw)) throw new GatewayError("auth_error", "The API key is malformed.");
  const hash = hashApiKey(raw);
  const principal = standing === "exact" ? await cache.refresh(hash) : await cache.lookup(hash);
  if (!principal) throw new GatewayError("auth_error", "The API key is not valid.");
  if (principal.key.status === "revoked") throw new GatewayError("auth_error", "The API key has been revoked.");
  const { key } = principal;
  if (keyExpired(key.expiresAt, cache.now())) {
    throw new GatewayError("auth_error", `The API key expired at ${new Date(key.expiresAt!).toISOString()} (the key's policy).`, { code: "key_expired" });
  }
  if (principal.account.status !== "active") throw accountSuspended(principal.account.status);
  // request.ip: the socket's peer, or X-Forwarded-For only from a server.trusted_proxies peer.
  if (!networkAllowed(key.allowedNetworks, request.ip)) {
    throw new GatewayError("forbidden", `The key's policy does not allow requests from the client address ${request.ip}.`, { code: "key_network_not_allowed" });
  }
  request.meter.keyId = principal.key.id;
  request.meter.accountId = principal.account.id;
  request.principal = principal;
  return principal;
}
