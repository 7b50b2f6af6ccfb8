// Company sign-in (OpenID Connect, `oidc` in the config): GET /auth/oidc/start sends the browser to
// the issuer with PKCE, state and nonce sealed in a short-lived cookie (so any worker or process can
// take the callback); GET /auth/oidc/callback checks the answer, signs the person in and goes to the
// dashboard. A refusal goes back to the sign-in page with ?oidc_error=<reason>; the detail is logged.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { readCompanyClaims } from "../../accounts/company-claims.js";
import type { OidcSettings } from "../../config/oidc-settings.js";
import { GatewayError } from "../../errors/catalogue.js";
import type { RouteContext } from "../../http/route-context.js";
import { signInCompanyPerson } from "../company-sign-in.js";
import { OidcClients, OidcRefusal, type OidcFlow } from "../oidc-client.js";
import { readCookie, SESSION_COOKIE, setSessionCookie } from "../session-auth.js";

const FLOW_COOKIE = "mgw_oidc";
const FLOW_PATH = "/dashboard/api/auth/oidc";
const FLOW_TTL_MS = 10 * 60_000;
const CALLBACK_PATH = `${FLOW_PATH}/callback`;

export function registerOidcRoutes(app: FastifyInstance, ctx: RouteContext, clients = new OidcClients()): void {
  app.get("/auth/oidc/start", async (request, reply) => {
    const settings = configured(request);
    try {
      const { url, flow } = await clients.authorizationUrl(settings, redirectUri(request));
      setFlowCookie(request, reply, ctx.store.box.encrypt(JSON.stringify({ ...flow, expires: Date.now() + FLOW_TTL_MS })), FLOW_TTL_MS);
      return reply.redirect(url.href, 302);
    } catch (error) {
      return refuse(request, reply, error);
    }
  });

  app.get("/auth/oidc/callback", async (request, reply) => {
    const settings = configured(request);
    const sealed = readCookie(request, FLOW_COOKIE);
    // Used once: the cookie goes whatever the outcome.
    setFlowCookie(request, reply, "", 0);
    try {
      const flow = openFlow(ctx, sealed);
      const query = new URL(request.url, "http://callback").search;
      const claims = await clients.claims(settings, new URL(`${redirectUri(request)}${query}`), flow);
      const identity = readCompanyClaims(claims, settings);
      if ("refused" in identity) throw new OidcRefusal(identity.refused, `email ${String(claims.email ?? "(none)")} refused`);
      const { account, created } = await signInCompanyPerson(ctx, request, settings, identity);
      const previous = readCookie(request, SESSION_COOKIE);
      if (previous) {
        const old = await ctx.store.sessions.find(previous);
        if (old) await ctx.store.sessions.delete(old.session.id);
      }
      const { token } = await ctx.store.sessions.create(account.id);
      setSessionCookie(request, reply, token);
      request.log.info({ account: account.id, created, subject: identity.subject }, "company sign-in");
      return reply.redirect("/dashboard", 302);
    } catch (error) {
      return refuse(request, reply, error);
    }
  });
}

function configured(request: FastifyRequest): OidcSettings {
  const settings = request.snapshot.config.oidc;
  if (!settings) throw new GatewayError("not_found", "Company sign-in is not configured on this gateway.");
  return settings;
}

/** Where the issuer sends the browser back: server.public_url, else the address this request came to. */
function redirectUri(request: FastifyRequest): string {
  const base = request.snapshot.config.publicUrl ?? `${request.protocol}://${request.host}`;
  return `${base}${CALLBACK_PATH}`;
}

function setFlowCookie(request: FastifyRequest, reply: FastifyReply, value: string, ttlMs: number): void {
  const attributes = [`${FLOW_COOKIE}=${value}`, `Path=${FLOW_PATH}`, "HttpOnly", "SameSite=Lax", `Max-Age=${Math.floor(ttlMs / 1000)}`];
  if (request.protocol === "https") attributes.push("Secure");
  reply.header("set-cookie", attributes.join("; "));
}

function openFlow(ctx: RouteContext, sealed: string | null): OidcFlow {
  if (!sealed) throw new OidcRefusal("oidc_state_missing", "no sign-in in progress in this browser (cookie absent)");
  let flow: OidcFlow & { expires: number };
  try {
    flow = JSON.parse(ctx.store.box.decrypt(sealed)) as OidcFlow & { expires: number };
  } catch {
    throw new OidcRefusal("oidc_state_missing", "the sign-in cookie does not open");
  }
  if (!(flow.expires > Date.now())) throw new OidcRefusal("oidc_state_missing", "the sign-in took longer than 10 minutes");
  return flow;
}

function refuse(request: FastifyRequest, reply: FastifyReply, error: unknown) {
  if (!(error instanceof OidcRefusal)) throw error;
  request.log.warn({ reason: error.code, detail: error.detail }, "company sign-in refused");
  return reply.redirect(`/dashboard?oidc_error=${error.code}`, 302);
}
