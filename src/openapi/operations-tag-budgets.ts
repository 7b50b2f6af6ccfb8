// The tag budgets' operations (docs/billing.md, "Tags and tag budgets"): the admin API's and the
// dashboard's (administrators), one answer shape.
import { z } from "zod";
import { tagBudgetSchemas } from "../admin/routes/tag-budgets.js";
import { admin, dash, ok, type OperationSpec } from "./operation-spec.js";
import { budgetUseView, isoTime } from "./response-schema-parts.js";

/** tagBudgetsJson (src/admin/tag-budgets.ts). */
export const tagBudgetView = budgetUseView.extend({
  tag: z.string(),
  account_id: z.string().nullable(),
  scope: z.string(),
  code: z.literal("tag_budget_exceeded"),
  resets_at: isoTime,
  updated_at: isoTime,
});

/** tagBudgetListView. */
export const tagBudgetListSchema = z.object({ object: z.literal("list"), month: z.string(), resets_at: isoTime, data: z.array(tagBudgetView) });

export const tagBudgetRemovedSchema = z.object({ deleted: z.literal(true), tag: z.string(), account_id: z.string().nullable(), scope: z.string() });

export const TAG_BUDGET_ADMIN_OPERATIONS: readonly OperationSpec[] = [
  admin({
    method: "GET",
    path: "/tag-budgets",
    summary: "Every budget on a tag (gateway-wide or one account's), with this month's spend, held and what is left",
    responses: ok(tagBudgetListSchema),
  }),
  admin({
    method: "POST",
    path: "/tag-budgets",
    summary: "Set the monthly USD and/or token budget on a tag key=value, gateway-wide or for one account (audited)",
    body: tagBudgetSchemas.body,
    responses: ok(tagBudgetView),
  }),
  admin({
    method: "DELETE",
    path: "/tag-budgets",
    summary: "Remove the budget on a tag (audited)",
    query: tagBudgetSchemas.keyQuery,
    responses: ok(tagBudgetRemovedSchema),
  }),
];

export const TAG_BUDGET_DASHBOARD_OPERATIONS: readonly OperationSpec[] = [
  dash({ method: "GET", path: "/admin/tag-budgets", summary: "Every budget on a tag with this month's use (administrators)", responses: ok(tagBudgetListSchema) }),
  dash({
    method: "POST",
    path: "/admin/tag-budgets",
    summary: "Set the monthly budget on a tag (administrators; audited)",
    body: tagBudgetSchemas.body,
    responses: ok(tagBudgetView),
  }),
  dash({
    method: "DELETE",
    path: "/admin/tag-budgets",
    summary: "Remove the budget on a tag (administrators; audited)",
    query: tagBudgetSchemas.keyQuery,
    responses: ok(tagBudgetRemovedSchema),
  }),
];
