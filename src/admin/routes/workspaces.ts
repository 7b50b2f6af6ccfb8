// /admin/v1/workspaces: every workspace with its budget and this month's use (issue 41 item 4);
// /admin/v1/workspaces/:id/budgets: a workspace's monthly budgets, its members' budget and its allowed
// models, with this month's use (ADR 0037; docs/billing.md, "Workspace and member budgets").
import { z } from "zod";
import { parseWith } from "../validate.js";
import { adminActor } from "../auth.js";
import { policyChange, setWorkspaceBudgets, workspaceBudgetsBody, workspaceBudgetsView, workspaceListQuery, workspaceListView } from "../workspace-budgets.js";
import { id, type AdminRoute } from "./route.js";

/** Every request schema of this file (the OpenAPI document's). */
export const workspaceSchemas = { params: z.object({ id }), budgetsBody: workspaceBudgetsBody, listQuery: workspaceListQuery };

export const workspaceRoutes: AdminRoute[] = [
  {
    method: "GET",
    url: "/workspaces",
    scope: "workspaces:read",
    async handler(request, _reply, ctx) {
      return workspaceListView(ctx.store, parseWith(workspaceListQuery, request.query, "query"), ctx.pipeline.authCache.now());
    },
  },
  {
    method: "GET",
    url: "/workspaces/:id/budgets",
    scope: "workspaces:read",
    async handler(request, _reply, ctx) {
      const { id: workspaceId } = parseWith(workspaceSchemas.params, request.params, "id");
      return workspaceBudgetsView(ctx.store, workspaceId, ctx.pipeline.authCache.now());
    },
  },
  {
    method: "PATCH",
    url: "/workspaces/:id/budgets",
    scope: "workspaces:write",
    async handler(request, _reply, ctx) {
      const { id: workspaceId } = parseWith(workspaceSchemas.params, request.params, "id");
      const change = policyChange(parseWith(workspaceBudgetsBody, request.body), request.snapshot.config);
      await setWorkspaceBudgets(ctx.store, adminActor(request), workspaceId, change);
      // This process drops the workspace's keys at once (the others within a poll of auth_events).
      await ctx.pipeline.authCache.poll();
      return workspaceBudgetsView(ctx.store, workspaceId, ctx.pipeline.authCache.now());
    },
  },
];
