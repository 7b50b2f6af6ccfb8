// The workspace budgets' operations (ADR 0037): the admin API's and the dashboard's, one answer shape.
import { z } from "zod";
import { workspaceSchemas } from "../admin/routes/workspaces.js";
import { workspaceRouteSchemas } from "../dashboard/routes/workspace-routes.js";
import { admin, dash, ok, type OperationSpec } from "./operation-spec.js";
import { budgetUseView, isoTime, usdText } from "./response-schema-parts.js";

/** workspaceBudgetsView (src/admin/workspace-budgets.ts). */
const workspaceBudgetsSchema = z.object({
  workspace_id: z.string(),
  name: z.string(),
  month: z.string(),
  resets_at: isoTime,
  allowed_models: z.array(z.string()).nullable(),
  guardrails: z.array(z.string()),
  allowed_mcp: z.array(z.string()).nullable(),
  member_monthly_budget_usd: usdText.nullable(),
  budget: budgetUseView,
  members: z.array(z.object({ account_id: z.string(), email: z.string(), role: z.enum(["owner", "admin", "member"]), budget: budgetUseView })),
});

/** workspaceListView (src/admin/workspace-budgets.ts): every workspace, a page at a time. */
const workspaceListSchema = z.object({
  object: z.literal("list"),
  month: z.string(),
  resets_at: isoTime,
  data: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      created_at: isoTime,
      members: z.number().int(),
      allowed_models: z.array(z.string()).nullable(),
      guardrails: z.array(z.string()),
      allowed_mcp: z.array(z.string()).nullable(),
      member_monthly_budget_usd: usdText.nullable(),
      budget: budgetUseView,
    }),
  ),
  has_more: z.boolean(),
  next_cursor: z.string().nullable(),
});

export const WORKSPACE_BUDGET_ADMIN_OPERATIONS: readonly OperationSpec[] = [
  admin({
    method: "GET",
    path: "/workspaces",
    summary: "Every workspace, oldest first, with its budgets, this month's spend and held, and its member count",
    query: workspaceSchemas.listQuery,
    responses: ok(workspaceListSchema),
  }),
  admin({
    method: "GET",
    path: "/workspaces/:id/budgets",
    summary: "A workspace's budgets, member budget and allowed models, with this month's use",
    params: workspaceSchemas.params,
    responses: ok(workspaceBudgetsSchema),
  }),
  admin({
    method: "PATCH",
    path: "/workspaces/:id/budgets",
    summary: "Set a workspace's monthly budgets, member budget or allowed models (null removes one; audited)",
    params: workspaceSchemas.params,
    body: workspaceSchemas.budgetsBody,
    responses: ok(workspaceBudgetsSchema),
  }),
];

export const WORKSPACE_BUDGET_DASHBOARD_OPERATIONS: readonly OperationSpec[] = [
  dash({
    method: "GET",
    path: "/admin/workspaces",
    summary: "Every workspace with its budgets and this month's use (administrators)",
    query: workspaceRouteSchemas.listQuery,
    responses: ok(workspaceListSchema),
  }),
  dash({
    method: "GET",
    path: "/workspaces/:id/budgets",
    summary: "The workspace's budgets and models with this month's use (any member)",
    params: workspaceRouteSchemas.wsParams,
    responses: ok(workspaceBudgetsSchema),
  }),
  dash({
    method: "PATCH",
    path: "/workspaces/:id/budgets",
    summary: "Set the workspace's budgets and models (owners and admins; audited)",
    params: workspaceRouteSchemas.wsParams,
    body: workspaceRouteSchemas.budgetsBody,
    responses: ok(workspaceBudgetsSchema),
  }),
];
