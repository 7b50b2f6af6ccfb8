// The dashboard's alerts (ADR 0040; docs/dashboard.md, "Alerts"): a workspace owner subscribes
// endpoints to the workspace's events; an administrator to every event (the operator's, workspace
// null). Both see each subscription's deliveries and send a test event. Signed-in users download
// their spend report (and a workspace owner or admin the workspace's) as JSON or CSV.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { alertSchemas, createSubscription, deleteSubscription, deliveryView, subscriptionOr404, subscriptionView, updateSubscription } from "../../admin/alert-subscriptions.js";
import { idParam, parseWith } from "../../admin/validate.js";
import { GatewayError } from "../../errors/catalogue.js";
import type { RouteContext } from "../../http/route-context.js";
import { lastPeriod, reportCsv, spendReport } from "../../pipeline/alerts/spend-report.js";
import { dashboardActor, requireAdmin } from "./admin-routes.js";

const wsParams = z.object({ id: idParam });
const wsSubscriptionParams = z.object({ id: idParam, subscriptionId: idParam });
const adminSubscriptionParams = z.object({ subscriptionId: idParam });
const reportQuery = z.object({
  period: z.enum(["daily", "weekly"]).default("daily"),
  format: z.enum(["json", "csv"]).default("json"),
  workspace_id: idParam.optional(),
});

/** Every request schema of this file (OpenAPI is generated from these). */
export const alertRouteSchemas = { ...alertSchemas, wsParams, wsSubscriptionParams, adminSubscriptionParams, reportQuery };

/** Whose subscriptions a request manages: a workspace (its owner) or the operator's (an administrator). */
type Owner = { workspaceId: string | null };

async function requireOwner(ctx: RouteContext, request: FastifyRequest, workspaceId: string): Promise<Owner> {
  const role = await ctx.store.workspaces.roleOf(workspaceId, request.dashboard.account.id);
  if (role === null) throw new GatewayError("not_found", `No workspace ${workspaceId}.`);
  if (role !== "owner") throw new GatewayError("forbidden", `Only the workspace's owner manages its alerts; your role is ${role}.`);
  return { workspaceId };
}

export function registerAlertRoutes(app: FastifyInstance, ctx: RouteContext): void {
  /** The six operations of one owner's subscriptions under `base`. */
  const family = (base: string, ownerOf: (request: FastifyRequest) => Promise<Owner>, subscriptionIdOf: (request: FastifyRequest) => string) => {
    const mine = async (request: FastifyRequest) => {
      const owner = await ownerOf(request);
      return subscriptionOr404(ctx.store, subscriptionIdOf(request), owner.workspaceId ?? undefined);
    };
    app.get(base, async (request) => {
      const owner = await ownerOf(request);
      return { object: "list", data: (await ctx.store.alerts.list(owner.workspaceId)).map(subscriptionView) };
    });
    app.post(base, async (request, reply) => {
      const owner = await ownerOf(request);
      const body = parseWith(alertSchemas.createBody, request.body);
      const created = await createSubscription(ctx.store, dashboardActor(request), request.snapshot.config.alerts.allowedHttpHosts, body, owner.workspaceId);
      reply.code(201);
      return created;
    });
    app.patch(`${base}/:subscriptionId`, async (request) => {
      const before = await mine(request);
      const body = parseWith(alertSchemas.updateBody, request.body);
      return { subscription: await updateSubscription(ctx.store, dashboardActor(request), request.snapshot.config.alerts.allowedHttpHosts, before, body) };
    });
    app.delete(`${base}/:subscriptionId`, async (request) => {
      const before = await mine(request);
      await deleteSubscription(ctx.store, dashboardActor(request), before);
      return { id: before.id, deleted: true };
    });
    app.get(`${base}/:subscriptionId/deliveries`, async (request) => {
      const subscription = await mine(request);
      const q = parseWith(alertSchemas.deliveriesQuery, request.query, "query");
      return { object: "list", data: (await ctx.store.alerts.deliveries(subscription.id, q.limit)).map(deliveryView) };
    });
    app.post(`${base}/:subscriptionId/test`, async (request, reply) => {
      const subscription = await mine(request);
      reply.code(202);
      return { event_id: await ctx.store.alerts.sendTest(subscription.id) };
    });
  };
  family(
    "/workspaces/:id/alerts",
    (request) => requireOwner(ctx, request, parseWith(wsParams, request.params, "id").id),
    (request) => parseWith(wsSubscriptionParams, request.params, "subscriptionId").subscriptionId,
  );
  family(
    "/admin/alerts",
    async (request) => {
      requireAdmin(request);
      return { workspaceId: null };
    },
    (request) => parseWith(adminSubscriptionParams, request.params, "subscriptionId").subscriptionId,
  );

  // The last whole day or week of the signed-in account's spend, or of a workspace's (its owner or admins).
  app.get("/reports/spend", async (request, reply) => {
    const q = parseWith(reportQuery, request.query, "query");
    const me = request.dashboard.account;
    if (q.workspace_id !== undefined) {
      const role = await ctx.store.workspaces.roleOf(q.workspace_id, me.id);
      if (role === null) throw new GatewayError("not_found", `No workspace ${q.workspace_id}.`);
      if (role === "member") throw new GatewayError("forbidden", "Only a workspace owner or admin downloads its spend report.");
    }
    const subject = q.workspace_id !== undefined ? { kind: "workspace" as const, id: q.workspace_id } : { kind: "account" as const, id: me.id };
    const report = await spendReport(ctx.store, subject, q.period, lastPeriod(q.period, ctx.pipeline.authCache.now()));
    if (q.format === "json") return report;
    reply.header("content-type", "text/csv; charset=utf-8");
    reply.header("content-disposition", `attachment; filename="spend-${q.period}-${report.from.slice(0, 10)}.csv"`);
    return reportCsv(report);
  });
}
