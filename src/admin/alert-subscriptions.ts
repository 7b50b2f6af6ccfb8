// Alert subscriptions as the admin API and the dashboard write and show them (ADR 0040): one schema,
// one view, audited changes. The endpoint is checked against alerts.allowed_http_hosts; the signing
// secret is in the creation's answer only.
import { z } from "zod";
import { ALERT_EVENT_TYPES } from "../core/alert-events.js";
import { GatewayError } from "../errors/catalogue.js";
import { checkEndpointUrl, MAX_ENDPOINT_URL_LENGTH } from "../pipeline/alerts/endpoint-url.js";
import type { AlertDelivery, AlertSubscription } from "../store/alerts-store.js";
import type { AuditActor } from "../store/audit-store.js";
import type { Store } from "../store/index.js";

const eventList = z
  .array(z.enum(ALERT_EVENT_TYPES))
  .min(1)
  .max(ALERT_EVENT_TYPES.length)
  .transform((events) => [...new Set(events)]);

export const alertSchemas = {
  params: z.object({ id: z.string().min(1).max(100) }),
  listQuery: z.object({ workspace_id: z.string().min(1).max(100).optional() }),
  deliveriesQuery: z.object({ limit: z.coerce.number().int().min(1).max(500).default(100) }),
  createBody: z
    .object({
      url: z.string().min(1).max(MAX_ENDPOINT_URL_LENGTH),
      format: z.enum(["json", "slack"]).default("json"),
      events: eventList,
      description: z.string().trim().max(200).nullable().optional(),
    })
    .strict(),
  updateBody: z
    .object({
      url: z.string().min(1).max(MAX_ENDPOINT_URL_LENGTH).optional(),
      format: z.enum(["json", "slack"]).optional(),
      events: eventList.optional(),
      description: z.string().trim().max(200).nullable().optional(),
      enabled: z.boolean().optional(),
    })
    .strict(),
};

export const adminCreateBody = alertSchemas.createBody.extend({ workspace_id: z.string().min(1).max(100).nullable().optional() }).strict();

export function subscriptionView(s: AlertSubscription) {
  return {
    id: s.id,
    workspace_id: s.workspaceId,
    url: s.url,
    format: s.format,
    events: s.events,
    description: s.description,
    enabled: s.enabled,
    created_by: s.createdBy,
    created_at: new Date(s.createdAt).toISOString(),
    updated_at: new Date(s.updatedAt).toISOString(),
  };
}

export function deliveryView(d: AlertDelivery) {
  return {
    id: d.id,
    event_id: d.eventId,
    event_type: d.eventType,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: d.status === "pending" ? new Date(d.nextAttemptAt).toISOString() : null,
    last_status: d.lastStatus,
    last_error: d.lastError,
    created_at: new Date(d.createdAt).toISOString(),
    delivered_at: d.deliveredAt === null ? null : new Date(d.deliveredAt).toISOString(),
  };
}

const audited = (s: AlertSubscription) => ({ url: s.url, format: s.format, events: s.events, enabled: s.enabled, workspace_id: s.workspaceId });

export async function createSubscription(
  store: Store,
  actor: AuditActor,
  allowedHttpHosts: readonly string[],
  body: z.infer<typeof alertSchemas.createBody>,
  workspaceId: string | null,
) {
  const url = checkEndpointUrl(body.url, allowedHttpHosts);
  if (workspaceId !== null && !(await store.db.selectFrom("workspaces").select("id").where("id", "=", workspaceId).executeTakeFirst())) {
    throw new GatewayError("not_found", `No workspace ${workspaceId}.`);
  }
  const { subscription, secret } = await store.audited(actor, async (tx) => {
    const created = await tx.alerts.create({
      workspaceId,
      url,
      format: body.format,
      events: body.events,
      description: body.description ?? null,
      createdBy: actor.name ?? actor.id,
    });
    await tx.record({
      action: "alert_subscription.create",
      targetType: "alert_subscription",
      targetId: created.subscription.id,
      before: null,
      after: audited(created.subscription),
    });
    return created;
  });
  return { subscription: subscriptionView(subscription), secret };
}

/** The subscription, or 404; `workspaceId` given: only that workspace's. */
export async function subscriptionOr404(store: Store, id: string, workspaceId?: string): Promise<AlertSubscription> {
  const found = await store.alerts.get(id);
  if (!found || (workspaceId !== undefined && found.workspaceId !== workspaceId)) throw new GatewayError("not_found", `No alert subscription ${id}.`);
  return found;
}

export async function updateSubscription(
  store: Store,
  actor: AuditActor,
  allowedHttpHosts: readonly string[],
  before: AlertSubscription,
  body: z.infer<typeof alertSchemas.updateBody>,
) {
  const url = body.url === undefined ? undefined : checkEndpointUrl(body.url, allowedHttpHosts);
  const after = await store.audited(actor, async (tx) => {
    const updated = await tx.alerts.update(before.id, { ...body, ...(url !== undefined && { url }) });
    if (!updated) throw new GatewayError("not_found", `No alert subscription ${before.id}.`);
    await tx.record({ action: "alert_subscription.update", targetType: "alert_subscription", targetId: before.id, before: audited(before), after: audited(updated) });
    return updated;
  });
  return subscriptionView(after);
}

export async function deleteSubscription(store: Store, actor: AuditActor, before: AlertSubscription): Promise<void> {
  await store.audited(actor, async (tx) => {
    await tx.alerts.delete(before.id);
    await tx.record({ action: "alert_subscription.delete", targetType: "alert_subscription", targetId: before.id, before: audited(before), after: null });
  });
}
