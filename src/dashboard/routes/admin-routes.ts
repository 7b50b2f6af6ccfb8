// Administrators (accounts.is_admin = 1; the bootstrap account is one) list accounts and change
// their status or admin flag, and see every upstream key's circuit breaker. A status change drops the account's keys from this process's auth
// cache at once, so a suspended or closed account's keys get 402 account_suspended on the very next
// gateway request (other processes follow the auth_events row that setStatus writes).
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import type { RouteContext } from "../../http/route-context.js";
import { subjectLimitsSchema } from "../../billing/traffic-limits.js";
import { GatewayError } from "../../errors/catalogue.js";
import { ACCOUNT_STATUSES, type Account, type AccountStatus } from "../../store/accounts-store.js";
import { updateAccount } from "../../admin/operations.js";
import { auditView } from "../../admin/views.js";
import type { AuditActor } from "../../store/audit-store.js";
import { upstreamStatuses } from "../../upstreams/health/upstream-status.js";
import { requireActive } from "../session-auth.js";
import { idParam, parseWith } from "../validate.js";
import { accountView } from "../views.js";

const auditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  before: z
    .string()
    .regex(/^\d{1,19}$/)
    .optional(),
  target_id: idParam.optional(),
  actor_id: idParam.optional(),
  action: z.string().min(1).max(100).optional(),
});
const listQuery = z.object({ limit: z.coerce.number().int().min(1).max(500).default(100), offset: z.coerce.number().int().min(0).default(0) });
const changeBody = z
  .object({
    status: z.enum(ACCOUNT_STATUSES as [AccountStatus, ...AccountStatus[]]).optional(),
    is_admin: z.boolean().optional(),
    clamp_output: z.boolean().optional(),
    /** The account's own rate and concurrency limits (docs/billing.md); null removes them (the tier's apply). */
    limits: subjectLimitsSchema.nullable().optional(),
  })
  .refine((b) => b.status !== undefined || b.is_admin !== undefined || b.clamp_output !== undefined || b.limits !== undefined, {
    message: "give status, is_admin, clamp_output or limits",
  });

/** The audit log's actor of a dashboard administrator's change. */
export function dashboardActor(request: FastifyRequest): AuditActor {
  const me = request.dashboard.account;
  return { type: "dashboard", id: me.id, name: me.email, clientAddress: request.ip, requestId: request.id };
}

/** Administrator powers, reads included, need an active account: suspension takes them away too. */
export function requireAdmin(request: FastifyRequest): Account {
  const me = request.dashboard.account;
  if (!me.isAdmin) throw new GatewayError("forbidden", "Only administrators may use the admin routes.");
  requireActive(me);
  return me;
}

export function registerAdminRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get("/admin/accounts", async (request) => {
    requireAdmin(request);
    const { limit, offset } = parseWith(listQuery, request.query, "query");
    const [accounts, total] = await Promise.all([ctx.store.accounts.list({ limit, offset }), ctx.store.accounts.count()]);
    return { data: accounts.map(accountView), total };
  });

  // The same statuses as `gateway admin upstreams status --json`: fingerprints, never keys.
  app.get("/admin/upstreams", async (request) => {
    requireAdmin(request);
    return upstreamStatuses(ctx.store, ctx.config);
  });

  // The audit log (docs/operations.md, "Audit log"), newest first; `before` continues a page.
  app.get("/admin/audit", async (request) => {
    requireAdmin(request);
    const q = parseWith(auditQuery, request.query, "query");
    const entries = await ctx.store.audit.list({
      limit: q.limit,
      ...(q.before !== undefined && { beforeId: BigInt(q.before) }),
      ...(q.target_id !== undefined && { targetId: q.target_id }),
      ...(q.actor_id !== undefined && { actorId: q.actor_id }),
      ...(q.action !== undefined && { action: q.action }),
    });
    return { data: entries.map(auditView) };
  });

  app.patch("/admin/accounts/:id", async (request) => {
    const me = requireAdmin(request);
    const { id } = parseWith(z.object({ id: idParam }), request.params, "id");
    const body = parseWith(changeBody, request.body);
    // An administrator who suspends or demotes themselves could lock everyone out.
    if (id === me.id && (body.status !== undefined || body.is_admin !== undefined)) {
      throw new GatewayError("invalid_request", "You cannot change your own account's status or admin flag.", { param: "id" });
    }
    const current = await ctx.store.accounts.get(id);
    if (!current) throw new GatewayError("not_found", `No account ${id}.`);
    const changes = {
      ...(body.status !== undefined && body.status !== current.status && { status: body.status }),
      ...(body.is_admin !== undefined && body.is_admin !== current.isAdmin && { isAdmin: body.is_admin }),
      ...(body.clamp_output !== undefined && body.clamp_output !== current.clampOutput && { clampOutput: body.clamp_output }),
      ...(body.limits !== undefined && { limits: body.limits }),
    };
    const account = Object.keys(changes).length === 0 ? current : await ctx.store.audited(dashboardActor(request), (tx) => updateAccount(tx, id, changes));
    ctx.pipeline.authCache.invalidateAccount(id);
    return { account: accountView(account) };
  });
}
