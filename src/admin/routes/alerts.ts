// /admin/v1/alerts: the operator's and every workspace's alert subscriptions, their deliveries and a
// test event (docs/operations.md, "Alerts"; ADR 0040).
import { adminActor } from "../auth.js";
import { parseWith } from "../validate.js";
import {
  adminCreateBody,
  alertSchemas,
  createSubscription,
  deleteSubscription,
  deliveryView,
  subscriptionOr404,
  subscriptionView,
  updateSubscription,
} from "../alert-subscriptions.js";
import type { AdminRoute } from "./route.js";

export const alertRoutes: AdminRoute[] = [
  {
    method: "GET",
    url: "/alerts/subscriptions",
    scope: "alerts:read",
    async handler(request, _reply, ctx) {
      const q = parseWith(alertSchemas.listQuery, request.query, "query");
      return { object: "list", data: (await ctx.store.alerts.list(q.workspace_id)).map(subscriptionView) };
    },
  },
  {
    method: "POST",
    url: "/alerts/subscriptions",
    scope: "alerts:write",
    async handler(request, reply, ctx) {
      const body = parseWith(adminCreateBody, request.body);
      const created = await createSubscription(ctx.store, adminActor(request), ctx.config.alerts.allowedHttpHosts, body, body.workspace_id ?? null);
      reply.code(201);
      return created;
    },
  },
  {
    method: "PATCH",
    url: "/alerts/subscriptions/:id",
    scope: "alerts:write",
    async handler(request, _reply, ctx) {
      const { id } = parseWith(alertSchemas.params, request.params, "id");
      const before = await subscriptionOr404(ctx.store, id);
      return {
        subscription: await updateSubscription(ctx.store, adminActor(request), ctx.config.alerts.allowedHttpHosts, before, parseWith(alertSchemas.updateBody, request.body)),
      };
    },
  },
  {
    method: "DELETE",
    url: "/alerts/subscriptions/:id",
    scope: "alerts:write",
    async handler(request, _reply, ctx) {
      const { id } = parseWith(alertSchemas.params, request.params, "id");
      await deleteSubscription(ctx.store, adminActor(request), await subscriptionOr404(ctx.store, id));
      return { id, deleted: true };
    },
  },
  {
    method: "GET",
    url: "/alerts/subscriptions/:id/deliveries",
    scope: "alerts:read",
    async handler(request, _reply, ctx) {
      const { id } = parseWith(alertSchemas.params, request.params, "id");
      const q = parseWith(alertSchemas.deliveriesQuery, request.query, "query");
      await subscriptionOr404(ctx.store, id);
      return { object: "list", data: (await ctx.store.alerts.deliveries(id, q.limit)).map(deliveryView) };
    },
  },
  {
    method: "POST",
    url: "/alerts/subscriptions/:id/test",
    scope: "alerts:write",
    async handler(request, reply, ctx) {
      const { id } = parseWith(alertSchemas.params, request.params, "id");
      await subscriptionOr404(ctx.store, id);
      const eventId = await ctx.store.alerts.sendTest(id);
      reply.code(202);
      return { event_id: eventId };
    },
  },
];
