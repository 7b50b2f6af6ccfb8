// Authentication of /admin/v1: `Authorization: Bearer <admin token>`. No token, a malformed, unknown
// or revoked one: 401 auth_error. A route whose scope the token lacks: 403 forbidden with code
// missing_scope and the scope named in the message.
import type { FastifyRequest } from "fastify";
import { refuseRepeatedCredentialHeaders } from "../pipeline/authenticate.js";
import { GatewayError } from "../errors/catalogue.js";
import type { AdminToken } from "../store/admin-tokens-store.js";
import type { AuditActor } from "../store/audit-store.js";
import type { Store } from "../store/index.js";
import type { AdminScope } from "./scopes.js";

declare module "fastify" {
  interface FastifyRequest {
    adminToken: AdminToken;
  }
}

export async function authenticateAdmin(request: FastifyRequest, store: Store): Promise<AdminToken> {
  refuseRepeatedCredentialHeaders(request);
  const header = request.headers.authorization;
  const match = typeof header === "string" ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  const token = match ? await store.adminTokens.authenticate(match[1]!) : null;
  if (!token) throw new GatewayError("auth_error", "Missing, malformed, unknown or revoked admin token: send Authorization: Bearer <admin token>.");
  request.adminToken = token;
  return token;
}

export function requireScope(request: FastifyRequest, scope: AdminScope): void {
  if (!request.adminToken.scopes.includes(scope)) {
    throw new GatewayError("forbidden", `This admin token lacks the scope ${scope}.`, { code: "missing_scope" });
  }
}

/** The audit log's actor of an admin API request. */
export function adminActor(request: FastifyRequest): AuditActor {
  return { type: "admin_token", id: request.adminToken.id, name: request.adminToken.name, clientAddress: request.ip, requestId: request.id };
}
