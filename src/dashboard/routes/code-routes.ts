// Redemption codes in the dashboard (docs/dashboard.md, "Redeeming a code"): a signed-in account
// redeems a code for its own balance; administrators mint, list and revoke codes through the same
// operations as the admin API (/admin/v1/codes). Failed redemptions are throttled like sign-in: 5
// per (account, IP) and 50 per IP in 15 minutes, per process; a success clears the account's count.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { codeSchemas, codesPage, mintFromBody } from "../../admin/routes/codes.js";
import { revokeCode } from "../../admin/operations.js";
import { codeView } from "../../admin/views.js";
import { MAX_CODE_INPUT } from "../../store/redemption-code.js";
import { formatUsd } from "../../core/money.js";
import { GatewayError } from "../../errors/catalogue.js";
import type { RouteContext } from "../../http/route-context.js";
import { AttemptThrottle } from "../sign-in-throttle.js";
import { parseWith } from "../../admin/validate.js";
import { accountView } from "../../admin/account-views.js";
import { dashboardActor, requireAdmin } from "./admin-routes.js";

const redeemBody = z.object({ code: z.string().trim().min(1).max(MAX_CODE_INPUT) }).strict();

/** Every request schema of this file (OpenAPI is generated from these; the administrator routes use codeSchemas). */
export const codeRouteSchemas = { redeemBody };

export function registerCodeRoutes(app: FastifyInstance, ctx: RouteContext, throttle = new AttemptThrottle(ctx.store.attempts, "redeem")): void {
  app.post("/redeem", async (request) => {
    const me = request.dashboard.account;
    const ip = request.ip;
    const body = parseWith(redeemBody, request.body);
    const attempt = await throttle.begin(me.id, ip);
    if (attempt.wait > 0) {
      throw new GatewayError("rate_limit_error", `Too many failed redemptions; try again in ${attempt.wait} seconds.`, {
        code: "redeem_throttled",
        headers: { "retry-after": String(attempt.wait) },
      });
    }
    try {
      const { code, account } = await ctx.store.codes.redeem(body.code, me.id);
      await attempt.succeeded();
      return { credited_usd: formatUsd(code.value), code: { id: code.id, prefix: code.prefix }, account: accountView(account) };
    } catch (error) {
      // A code that is not redeemable stays counted; anything else (a store failure) was no guess.
      if (!(error instanceof GatewayError && error.type === "code_not_redeemable")) await attempt.succeeded();
      throw error;
    }
  });

  app.get("/admin/codes", async (request) => {
    requireAdmin(request);
    const { data, nextCursor } = await codesPage(ctx.store, parseWith(codeSchemas.listQuery, request.query, "query"));
    return { data, next_cursor: nextCursor };
  });

  app.post("/admin/codes", async (request, reply) => {
    requireAdmin(request);
    const body = parseWith(codeSchemas.mintBody, request.body);
    const result = await mintFromBody(ctx.store, dashboardActor(request), body);
    reply.code(201);
    return result;
  });

  app.post("/admin/codes/:id/revoke", async (request) => {
    requireAdmin(request);
    const { id } = parseWith(codeSchemas.params, request.params, "id");
    const code = await ctx.store.audited(dashboardActor(request), (tx) => revokeCode(tx, id));
    return { code: codeView(code) };
  });
}
