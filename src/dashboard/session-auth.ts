// Dashboard sessions over a cookie: an opaque random token (HttpOnly, SameSite=Lax, Secure behind
// TLS) that names a server-side row. State-changing requests must also echo the session's CSRF token
// in `x-csrf-token` (a value a cross-site page cannot read) and, when the browser sends an Origin,
// come from this host. Both refusals are 403 forbidden with code `csrf_failed`.
import { timingSafeEqual } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { RouteContext } from "../http/route-context.js";
import { GatewayError } from "../errors/catalogue.js";
import type { Account } from "../store/accounts-store.js";
import { SESSION_TTL_MS, type Session } from "../store/sessions-store.js";

export const SESSION_COOKIE = "mgw_session";
const COOKIE_PATH = "/dashboard";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export interface DashboardPrincipal {
  session: Session;
  account: Account;
}

declare module "fastify" {
  interface FastifyRequest {
    dashboard: DashboardPrincipal;
  }
}

export function readCookie(request: FastifyRequest, name: string): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return null;
}

/** True when the client reached us over TLS, directly or through a trusted proxy that says so. */
function overTls(request: FastifyRequest): boolean {
  return request.protocol?.toLowerCase() === "https";
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
  const attributes = [`${SESSION_COOKIE}=${token}`, `Path=${COOKIE_PATH}`, "HttpOnly", "SameSite=Lax", `Max-Age=${Math.floor(SESSION_TTL_MS / 1000)}`];
  if (overTls(request)) attributes.push("Secure");
  reply.header("set-cookie", attributes.join("; "));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  const attributes = [`${SESSION_COOKIE}=`, `Path=${COOKIE_PATH}`, "HttpOnly", "SameSite=Lax", "Max-Age=0"];
  if (overTls(request)) attributes.push("Secure");
  reply.header("set-cookie", attributes.join("; "));
}

function sameToken(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Refuses a state-changing request from another origin (used before a session exists too). */
export function checkOrigin(request: FastifyRequest): void {
  if (SAFE_METHODS.has(request.method)) return;
  const origin = request.headers.origin;
  if (!origin) return; // non-browser clients; the CSRF token still guards session routes
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    throw csrfFailed("The Origin header is not a valid origin.");
  }
  // request.host is X-Forwarded-Host only from a trusted proxy (server.trusted_proxies), else Host.
  if (host !== request.host.toLowerCase()) throw csrfFailed("Cross-origin requests are refused.");
}

function csrfFailed(message: string): GatewayError {
  return new GatewayError("forbidden", message, { code: "csrf_failed" });
}

/**
 * Loads the session named by the cookie: 401 unauthenticated without a live one; for
 * state-changing methods also the CSRF checks (403 forbidden, code csrf_failed).
 */
export async function requireSession(request: FastifyRequest, ctx: RouteContext): Promise<DashboardPrincipal> {
  const token = readCookie(request, SESSION_COOKIE);
  const found = token ? await ctx.store.sessions.find(token) : null;
  if (!found) throw new GatewayError("unauthenticated", "Sign in first: no signed-in session.");
  if (!SAFE_METHODS.has(request.method)) {
    checkOrigin(request);
    const sent = request.headers["x-csrf-token"];
    if (typeof sent !== "string" || !sameToken(sent, found.session.csrfToken)) {
      throw csrfFailed("Missing or wrong x-csrf-token header; reload the page and try again.");
    }
  }
  request.dashboard = found;
  request.meter.accountId = found.account.id;
  return found;
}

/** Dashboard writes by a suspended or closed account are refused like its keys are. */
export function requireActive(account: Account): void {
  if (account.status !== "active") throw new GatewayError("account_suspended", `The account is ${account.status}; changes are not allowed.`);
}

export function isSafeMethod(method: string): boolean {
  return SAFE_METHODS.has(method);
}
