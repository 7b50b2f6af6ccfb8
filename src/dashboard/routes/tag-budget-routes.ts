// Administrators' tag budgets on the dashboard's Teams page (docs/dashboard.md, "Teams"): the admin
// API's validation, audited change and view (src/admin/tag-budgets.ts), behind the session.
import type { FastifyInstance } from "fastify";
import { parseWith } from "../../admin/validate.js";
import { removeTagBudget, setTagBudget, tagBudgetBody, tagBudgetKeyQuery, tagBudgetListView, tagBudgetsJson } from "../../admin/tag-budgets.js";
import type { RouteContext } from "../../http/route-context.js";
import { dashboardActor, requireAdmin } from "./admin-routes.js";

export function registerTagBudgetRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get("/admin/tag-budgets", async (request) => {
    requireAdmin(request);
    return tagBudgetListView(ctx.store, ctx.pipeline.authCache.now());
  });

  app.post("/admin/tag-budgets", async (request) => {
    requireAdmin(request);
    const now = ctx.pipeline.authCache.now();
    const budget = await setTagBudget(ctx.store, dashboardActor(request), parseWith(tagBudgetBody, request.body), now);
    await ctx.pipeline.authCache.tagBudgets.reload();
    return (await tagBudgetsJson(ctx.store, [budget], now))[0];
  });

  app.delete("/admin/tag-budgets", async (request) => {
    requireAdmin(request);
    const removed = await removeTagBudget(ctx.store, dashboardActor(request), parseWith(tagBudgetKeyQuery, request.query, "query"));
    await ctx.pipeline.authCache.tagBudgets.reload();
    return { deleted: true, tag: removed.tag, account_id: removed.accountId, scope: removed.scope };
  });
}
