// /admin/v1/tag-budgets: monthly budgets on request tags, gateway-wide or for one account
// (docs/billing.md, "Tags and tag budgets"; docs/operations.md's scope table: tags:read, tags:write).
import { parseWith } from "../validate.js";
import { adminActor } from "../auth.js";
import { removeTagBudget, setTagBudget, tagBudgetBody, tagBudgetKeyQuery, tagBudgetListView, tagBudgetsJson } from "../tag-budgets.js";
import type { AdminRoute } from "./route.js";

/** Every request schema of this file (the OpenAPI document's). */
export const tagBudgetSchemas = { body: tagBudgetBody, keyQuery: tagBudgetKeyQuery };

export const tagBudgetRoutes: AdminRoute[] = [
  {
    method: "GET",
    url: "/tag-budgets",
    scope: "tags:read",
    async handler(_request, _reply, ctx) {
      return tagBudgetListView(ctx.store, ctx.pipeline.authCache.now());
    },
  },
  {
    method: "POST",
    url: "/tag-budgets",
    scope: "tags:write",
    async handler(request, _reply, ctx) {
      const now = ctx.pipeline.authCache.now();
      const budget = await setTagBudget(ctx.store, adminActor(request), parseWith(tagBudgetBody, request.body), now);
      // This process applies it at once (the others within a poll of the auth cache).
      await ctx.pipeline.authCache.tagBudgets.reload();
      return (await tagBudgetsJson(ctx.store, [budget], now))[0];
    },
  },
  {
    method: "DELETE",
    url: "/tag-budgets",
    scope: "tags:write",
    async handler(request, _reply, ctx) {
      const removed = await removeTagBudget(ctx.store, adminActor(request), parseWith(tagBudgetKeyQuery, request.query, "query"));
      await ctx.pipeline.authCache.tagBudgets.reload();
      return { deleted: true, tag: removed.tag, account_id: removed.accountId, scope: removed.scope };
    },
  },
];
