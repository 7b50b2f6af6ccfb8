// Stage 1, authenticate: the credential from `Authorization: Bearer` or `x-api-key`, its key and
// account (cached), then the account's status. Runs before the body is read.
import type { FastifyRequest } from "fastify";
import { hashApiKey, isWellFormedApiKey } from "../accounts/api-keys.js";
import { GatewayError } from "../errors/catalogue.js";
import type { AuthCache, Principal } from "./auth-cache.js";

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal;
  }
}

export function credentialOf(request: FastifyRequest): string | null {
  const authorization = request.headers.authorization;
  if (typeof authorization === "string" && authorization.length > 0) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match ? match[1]! : "";
  }
  const apiKey = request.headers["x-api-key"];
  return typeof apiKey === "string" ? apiKey.trim() : null;
}

export async function authenticate(request: FastifyRequest, cache: AuthCache): Promise<Principal> {
  const raw = credentialOf(request);
  if (raw === null) throw new GatewayError("auth_error", "Provide an API key as `Authorization: Bearer <key>` or `x-api-key: <key>`.");
  if (!isWellFormedApiKey(raw)) throw new GatewayError("auth_error", "The API key is malformed.");
  const principal = await cache.lookup(hashApiKey(raw));
  if (!principal) throw new GatewayError("auth_error", "The API key is not valid.");
  if (principal.key.status === "revoked") throw new GatewayError("auth_error", "The API key has been revoked.");
  if (principal.account.status !== "active") throw new GatewayError("account_suspended", `The account is ${principal.account.status}.`);
  request.meter.keyId = principal.key.id;
  request.meter.accountId = principal.account.id;
  request.principal = principal;
  return principal;
}
