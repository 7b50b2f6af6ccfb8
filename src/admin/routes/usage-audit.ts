// /admin/v1/accounts/:id/usage (the dashboard's usage summary of one account) and /admin/v1/audit
// (the audit log, newest first, filtered by target, actor or action).
import { z } from "zod";
import { GatewayError } from "../../errors/catalogue.js";
import { usageSummary } from "../usage-queries.js";
import { parseWith } from "../validate.js";
import { auditView, decodeCursor, encodeCursor } from "../views.js";
import { accountOr404, cursor, id, pageLimit, usageDaysQuery, type AdminRoute } from "./route.js";

/** Every request schema of this file (OpenAPI is generated from these). */
export const usageAuditSchemas = {
  accountParams: z.object({ id }),
  usageQuery: usageDaysQuery,
  auditQuery: z.object({
    limit: pageLimit,
    cursor,
    target_id: id.optional(),
    target_type: z.enum(["account", "key", "provider_key", "admin_token", "workspace", "config", "catalog", "redemption_code"]).optional(),
    actor_id: id.optional(),
    actor_type: z.enum(["admin_token", "dashboard", "cli"]).optional(),
    action: z.string().min(1).max(100).optional(),
  }),
};

export const usageAuditRoutes: AdminRoute[] = [
  {
    method: "GET",
    url: "/accounts/:id/usage",
    scope: "usage:read",
    async handler(request, _reply, ctx) {
      const { id: accountId } = parseWith(usageAuditSchemas.accountParams, request.params, "id");
      const { days } = parseWith(usageAuditSchemas.usageQuery, request.query, "query");
      await accountOr404(ctx, accountId);
      return { account_id: accountId, ...(await usageSummary(ctx.store.db, { accountId }, days)) };
    },
  },
  {
    method: "GET",
    url: "/audit",
    scope: "audit:read",
    async handler(request, _reply, ctx) {
      const q = parseWith(usageAuditSchemas.auditQuery, request.query, "query");
      const before = q.cursor === undefined ? undefined : decodeCursor(q.cursor, 1)[0]!;
      if (before !== undefined && !/^\d{1,19}$/.test(before)) throw new GatewayError("invalid_request", "cursor is not a cursor this API returned", { param: "cursor" });
      const entries = await ctx.store.audit.list({
        limit: q.limit + 1,
        ...(before !== undefined && { beforeId: BigInt(before) }),
        ...(q.target_id !== undefined && { targetId: q.target_id }),
        ...(q.target_type !== undefined && { targetType: q.target_type }),
        ...(q.actor_id !== undefined && { actorId: q.actor_id }),
        ...(q.actor_type !== undefined && { actorType: q.actor_type }),
        ...(q.action !== undefined && { action: q.action }),
      });
      const page = entries.slice(0, q.limit);
      const last = page.at(-1);
      const more = entries.length > q.limit && last !== undefined;
      return { object: "list", data: page.map(auditView), has_more: more, next_cursor: more ? encodeCursor([last.id]) : null };
    },
  },
];
