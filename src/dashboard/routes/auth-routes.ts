// Sign-up, sign-in, the current session and sign-out. These run before a session exists (except
// sign-out), so they guard against cross-site posts with the Origin check and JSON-only bodies.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { RouteContext } from "../../http/route-context.js";
import { hashPassword, verifyPassword } from "../../accounts/passwords.js";
import { GatewayError } from "../../errors/catalogue.js";
import type { Account } from "../../store/accounts-store.js";
import { checkOrigin, clearSessionCookie, readCookie, requireSession, SESSION_COOKIE, setSessionCookie } from "../session-auth.js";
import { AttemptThrottle } from "../sign-in-throttle.js";
import { email, parseWith, password } from "../../admin/validate.js";
import { accountView } from "../../admin/account-views.js";

const signInBody = z.object({ email, password: z.string().min(1).max(200) });
const signUpBody = z.object({ email, password, invite_token: z.string().min(1).max(200).optional() });

/** Every request schema of this file (OpenAPI is generated from these). */
export const authRouteSchemas = { signInBody, signUpBody };

// Verifying against this when the email is unknown keeps both paths equally slow, so timing
// does not tell which emails have accounts.
const DUMMY_HASH = hashPassword("not-a-real-password-for-timing");

function sessionBody(account: Account, csrfToken: string) {
  return { account: accountView(account), csrf_token: csrfToken };
}

async function startSession(ctx: RouteContext, request: FastifyRequest, reply: FastifyReply, account: Account) {
  const { token, session } = await ctx.store.sessions.create(account.id);
  setSessionCookie(request, reply, token);
  return sessionBody(account, session.csrfToken);
}

/** Only JSON bodies: a cross-site HTML form cannot send application/json without CORS. */
function requireJson(request: FastifyRequest): void {
  const type = request.headers["content-type"] ?? "";
  if (!type.toLowerCase().startsWith("application/json")) {
    throw new GatewayError("invalid_request", "send the body as application/json", { param: "content-type" });
  }
}

export function registerAuthRoutes(app: FastifyInstance, ctx: RouteContext, throttle = new AttemptThrottle(ctx.store.attempts, "signin")): void {
  app.get("/config", async (request) => ({ signup: request.snapshot.config.signup }));

  app.get("/session", async (request) => {
    const { session, account } = await requireSession(request, ctx);
    return sessionBody(account, session.csrfToken);
  });

  app.post("/signin", async (request, reply) => {
    checkOrigin(request);
    requireJson(request);
    const body = parseWith(signInBody, request.body);
    const ip = request.ip;
    const attempt = await throttle.begin(body.email, ip);
    if (attempt.wait > 0) {
      throw new GatewayError("rate_limit_error", `Too many failed sign-in attempts; try again in ${attempt.wait} seconds.`, {
        code: "signin_throttled",
        headers: { "retry-after": String(attempt.wait) },
      });
    }
    const account = await ctx.store.accounts.getByEmail(body.email);
    const stored = account ? await ctx.store.accounts.passwordHash(account.id) : null;
    const ok = await verifyPassword(body.password, stored ?? (await DUMMY_HASH));
    if (!account || !stored || !ok) {
      throw new GatewayError("unauthenticated", "The email or password is not correct.", { code: "invalid_credentials" });
    }
    await attempt.succeeded();
    // A fresh session id on every sign-in: a session fixed before sign-in is never promoted.
    const previous = readCookie(request, SESSION_COOKIE);
    if (previous) {
      const old = await ctx.store.sessions.find(previous);
      if (old) await ctx.store.sessions.delete(old.session.id);
    }
    return startSession(ctx, request, reply, account);
  });

  app.post("/signup", async (request, reply) => {
    checkOrigin(request);
    requireJson(request);
    const body = parseWith(signUpBody, request.body);
    const { config } = request.snapshot;
    if (config.signup === "invite_only" && !body.invite_token) {
      throw new GatewayError("forbidden", "Sign-up is by invite only; open the invite link you were sent.", { code: "invite_required", param: "invite_token" });
    }
    if (body.invite_token) {
      // Refuse a bad invite before creating the account, so a typo does not leave a stray account.
      const invite = await ctx.store.workspaces.peekInvite(body.invite_token);
      if (!invite) throw new GatewayError("not_found", "No such invite.", { param: "invite_token" });
      if (invite.usedAt !== null) throw new GatewayError("invite_used");
      if (invite.expiresAt <= Date.now()) throw new GatewayError("invite_expired");
    }
    const account = await ctx.store.accounts.create({ email: body.email, tier: config.defaultTier, balance: 0n, passwordHash: await hashPassword(body.password) });
    if (body.invite_token) await ctx.store.workspaces.acceptInvite(body.invite_token, account.id);
    reply.code(201);
    return startSession(ctx, request, reply, account);
  });

  app.post("/signout", async (request, reply) => {
    const { session } = await requireSession(request, ctx);
    await ctx.store.sessions.delete(session.id);
    clearSessionCookie(request, reply);
    return reply.code(204).send();
  });
}
