// The signed-in person's own account settings: changing the password. The current password is
// required (a session left open on a shared machine cannot take the account over), failures are
// throttled like sign-in, and the change ends every session of the account, this one included; this
// browser gets a fresh session (and CSRF token) in the answer.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { RouteContext } from "../../http/route-context.js";
import { hashPassword, verifyPassword } from "../../accounts/passwords.js";
import { accountView } from "../../admin/account-views.js";
import { changePassword } from "../../admin/password-links.js";
import { password, parseWith } from "../../admin/validate.js";
import { GatewayError } from "../../errors/catalogue.js";
import { setSessionCookie } from "../session-auth.js";
import { AttemptThrottle } from "../sign-in-throttle.js";
import { dashboardActor } from "./admin-routes.js";

const passwordBody = z.object({ current_password: z.string().min(1).max(200), new_password: password });

/** Every request schema of this file (OpenAPI is generated from these). */
export const accountRouteSchemas = { passwordBody };

export function registerAccountRoutes(app: FastifyInstance, ctx: RouteContext, throttle = new AttemptThrottle(ctx.store.attempts, "password")): void {
  app.post("/account/password", async (request, reply) => {
    const me = request.dashboard.account;
    const body = parseWith(passwordBody, request.body);
    const attempt = await throttle.begin(me.id, request.ip);
    if (attempt.wait > 0) {
      throw new GatewayError("rate_limit_error", `Too many wrong current passwords; try again in ${attempt.wait} seconds.`, {
        code: "password_throttled",
        headers: { "retry-after": String(attempt.wait) },
      });
    }
    const stored = await ctx.store.accounts.passwordHash(me.id);
    if (!stored || !(await verifyPassword(body.current_password, stored))) {
      throw new GatewayError("invalid_request", "current_password: this is not your current password", { param: "current_password", code: "invalid_credentials" });
    }
    await attempt.succeeded();
    const hash = await hashPassword(body.new_password);
    await ctx.store.audited(dashboardActor(request), (tx) => changePassword(tx, me.id, hash));
    const { token, session } = await ctx.store.sessions.create(me.id);
    setSessionCookie(request, reply, token);
    return { account: accountView(me), csrf_token: session.csrfToken };
  });
}
