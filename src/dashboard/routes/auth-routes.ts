// Sign-up, sign-in, set-password links, the current session and sign-out. These run before a session
// exists (except sign-out), so they guard against cross-site posts with the Origin check and JSON-only
// bodies. Sign-up follows server.signup: open, invite (a workspace invite is required) or closed.
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
import { setPasswordWithLink } from "../../admin/password-links.js";

const signInBody = z.object({ email, password: z.string().min(1).max(200) });
const signUpBody = z.object({ email, password, invite_token: z.string().min(1).max(200).optional() });
/** A set-password link's token (the part after # in the link). */
const linkToken = z.string().regex(/^[A-Za-z0-9_-]{20,200}$/, "must be the token of a set-password link (the text after # in the link)");
const linkBody = z.object({ token: linkToken });
const setPasswordBody = z.object({ token: linkToken, password });

/** Every request schema of this file (OpenAPI is generated from these). */
export const authRouteSchemas = { signInBody, signUpBody, linkBody, setPasswordBody };

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

/** An attempt at a set-password link token: throttled per client address like sign-in (429, Retry-After). */
async function beginLinkAttempt(throttle: AttemptThrottle, ip: string) {
  const attempt = await throttle.begin("link", ip);
  if (attempt.wait > 0) {
    throw new GatewayError("rate_limit_error", `Too many failed set-password link attempts; try again in ${attempt.wait} seconds.`, {
      code: "password_link_throttled",
      headers: { "retry-after": String(attempt.wait) },
    });
  }
  return attempt;
}

/** Only JSON bodies: a cross-site HTML form cannot send application/json without CORS. */
function requireJson(request: FastifyRequest): void {
  const type = request.headers["content-type"] ?? "";
  if (!type.toLowerCase().startsWith("application/json")) {
    throw new GatewayError("invalid_request", "send the body as application/json", { param: "content-type" });
  }
}

/** With `oidc.password_sign_in: false`, people sign in through the company's provider only. */
function refuseWithoutPasswords(request: FastifyRequest): void {
  if (request.snapshot.config.oidc?.passwordSignIn === false) {
    throw new GatewayError("forbidden", "Password sign-in is turned off on this gateway: use company sign-in.", { code: "password_sign_in_disabled" });
  }
}

/** The sign-in throttle, and the one for set-password link tokens (a failed look-up or use counts). */
export interface AuthThrottles {
  signIn: AttemptThrottle;
  link: AttemptThrottle;
}

export function registerAuthRoutes(
  app: FastifyInstance,
  ctx: RouteContext,
  throttles: AuthThrottles = { signIn: new AttemptThrottle(ctx.store.attempts, "signin"), link: new AttemptThrottle(ctx.store.attempts, "pwlink") },
): void {
  const throttle = throttles.signIn;
  app.get("/config", async (request) => {
    const { signup, oidc } = request.snapshot.config;
    return { signup, password_sign_in: oidc?.passwordSignIn ?? true, company_sign_in: oidc ? { label: oidc.label } : null };
  });

  app.get("/session", async (request) => {
    const { session, account } = await requireSession(request, ctx);
    return sessionBody(account, session.csrfToken);
  });

  app.post("/signin", async (request, reply) => {
    checkOrigin(request);
    requireJson(request);
    refuseWithoutPasswords(request);
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
    refuseWithoutPasswords(request);
    const body = parseWith(signUpBody, request.body);
    const { config } = request.snapshot;
    if (config.signup === "closed") {
      throw new GatewayError("forbidden", "Sign-up is closed on this gateway: an administrator creates accounts and sends a set-password link.", { code: "signup_closed" });
    }
    if (config.signup === "invite" && !body.invite_token) {
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

  // A set-password link (an administrator's invitation or reset): what it is for, without using it.
  app.post("/set-password/check", async (request) => {
    checkOrigin(request);
    requireJson(request);
    const body = parseWith(linkBody, request.body);
    const attempt = await beginLinkAttempt(throttles.link, request.ip);
    const link = await ctx.store.passwordLinks.peek(body.token);
    const account = link ? await ctx.store.accounts.get(link.accountId) : null;
    if (!link || !account) throw new GatewayError("password_link_invalid");
    await attempt.succeeded();
    return { email: account.email, purpose: link.purpose, expires_at: new Date(link.expiresAt).toISOString() };
  });

  // Uses the link once: sets the password, ends every session of the account, and signs this browser in.
  app.post("/set-password", async (request, reply) => {
    checkOrigin(request);
    requireJson(request);
    const body = parseWith(setPasswordBody, request.body);
    const attempt = await beginLinkAttempt(throttles.link, request.ip);
    const link = await ctx.store.passwordLinks.peek(body.token);
    const account = link ? await ctx.store.accounts.get(link.accountId) : null;
    if (!link || !account) throw new GatewayError("password_link_invalid");
    const hash = await hashPassword(body.password);
    // The person acts on their own account; the link is used (or found used by a concurrent request) in the transaction.
    const actor = { type: "dashboard" as const, id: account.id, name: account.email, clientAddress: request.ip, requestId: request.id };
    await ctx.store.audited(actor, (tx) => setPasswordWithLink(tx, body.token, hash));
    await attempt.succeeded();
    const previous = readCookie(request, SESSION_COOKIE);
    if (previous) {
      const old = await ctx.store.sessions.find(previous);
      if (old) await ctx.store.sessions.delete(old.session.id);
    }
    return startSession(ctx, request, reply, (await ctx.store.accounts.get(account.id)) ?? account);
  });

  app.post("/signout", async (request, reply) => {
    const { session } = await requireSession(request, ctx);
    await ctx.store.sessions.delete(session.id);
    clearSessionCookie(request, reply);
    return reply.code(204).send();
  });
}
