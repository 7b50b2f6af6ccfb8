// Alerts (ADR 0040): the admin API's and the dashboard's subscription operations, and the document's
// `webhooks` section: what a subscribed endpoint receives for each event type (the JSON format's
// body; a Slack subscription receives {"text": ...} instead).
import { z } from "zod";
import { adminCreateBody, alertSchemas } from "../admin/alert-subscriptions.js";
import { ALERT_EVENT_TYPES, type AlertEventType } from "../core/alert-events.js";
import { alertRouteSchemas } from "../dashboard/routes/alert-routes.js";
import { admin, created, dash, ok, type OperationSpec } from "./operation-spec.js";

const isoTime = z.string();
const subscription = z.object({
  id: z.string(),
  workspace_id: z.string().nullable(),
  url: z.string(),
  format: z.enum(["json", "slack"]),
  events: z.array(z.enum(ALERT_EVENT_TYPES)),
  description: z.string().nullable(),
  enabled: z.boolean(),
  created_by: z.string().nullable(),
  created_at: isoTime,
  updated_at: isoTime,
});
export const subscriptionSchemas = {
  one: z.object({ subscription }),
  created: z.object({ subscription, secret: z.string().describe("The signing secret, shown in this answer only") }),
  list: z.object({ object: z.literal("list"), data: z.array(subscription) }),
  deliveries: z.object({
    object: z.literal("list"),
    data: z.array(
      z.object({
        id: z.string(),
        event_id: z.string(),
        event_type: z.string(),
        status: z.enum(["pending", "delivered", "failed"]),
        attempts: z.number().int(),
        next_attempt_at: isoTime.nullable(),
        last_status: z.number().int().nullable(),
        last_error: z.string().nullable(),
        created_at: isoTime,
        delivered_at: isoTime.nullable(),
      }),
    ),
  }),
  deleted: z.object({ id: z.string(), deleted: z.literal(true) }),
  test: z.object({ event_id: z.string().nullable() }),
};
const accepted = (json: z.ZodType) => ({ 202: { description: "Accepted: delivered in the background", json } });

export const ALERT_ADMIN_OPERATIONS: readonly OperationSpec[] = [
  admin({
    method: "GET",
    path: "/alerts/subscriptions",
    summary: "Alert subscriptions: the operator's and every workspace's (or one workspace's)",
    query: alertSchemas.listQuery,
    responses: ok(subscriptionSchemas.list),
  }),
  admin({
    method: "POST",
    path: "/alerts/subscriptions",
    summary: "Subscribe an endpoint to alert events (workspace_id: a workspace's events only); the secret is shown once",
    body: adminCreateBody,
    responses: created(subscriptionSchemas.created),
  }),
  admin({
    method: "PATCH",
    path: "/alerts/subscriptions/:id",
    summary: "Change a subscription's endpoint, format, events or enabled state (audited)",
    params: alertSchemas.params,
    body: alertSchemas.updateBody,
    responses: ok(subscriptionSchemas.one),
  }),
  admin({
    method: "DELETE",
    path: "/alerts/subscriptions/:id",
    summary: "Delete a subscription and its deliveries (audited)",
    params: alertSchemas.params,
    responses: ok(subscriptionSchemas.deleted),
  }),
  admin({
    method: "GET",
    path: "/alerts/subscriptions/:id/deliveries",
    summary: "A subscription's deliveries, newest first: status, attempts, last HTTP status or error",
    params: alertSchemas.params,
    query: alertSchemas.deliveriesQuery,
    responses: ok(subscriptionSchemas.deliveries),
  }),
  admin({
    method: "POST",
    path: "/alerts/subscriptions/:id/test",
    summary: "Send a test event to the subscription",
    params: alertSchemas.params,
    responses: accepted(subscriptionSchemas.test),
  }),
];

/** The same operations for a workspace's owner and for an administrator (the operator's subscriptions). */
function dashboardFamily(base: string, who: string, params: z.ZodObject, itemParams: z.ZodObject): OperationSpec[] {
  return [
    dash({ method: "GET", path: base, summary: `Alert subscriptions (${who})`, ...(base.includes(":id") && { params }), responses: ok(subscriptionSchemas.list) }),
    dash({
      method: "POST",
      path: base,
      summary: `Subscribe an endpoint (${who}); the secret is shown once`,
      ...(base.includes(":id") && { params }),
      body: alertSchemas.createBody,
      responses: created(subscriptionSchemas.created),
    }),
    dash({
      method: "PATCH",
      path: `${base}/:subscriptionId`,
      summary: `Change a subscription (${who})`,
      params: itemParams,
      body: alertSchemas.updateBody,
      responses: ok(subscriptionSchemas.one),
    }),
    dash({ method: "DELETE", path: `${base}/:subscriptionId`, summary: `Delete a subscription (${who})`, params: itemParams, responses: ok(subscriptionSchemas.deleted) }),
    dash({
      method: "GET",
      path: `${base}/:subscriptionId/deliveries`,
      summary: `A subscription's deliveries (${who})`,
      params: itemParams,
      query: alertSchemas.deliveriesQuery,
      responses: ok(subscriptionSchemas.deliveries),
    }),
    dash({ method: "POST", path: `${base}/:subscriptionId/test`, summary: `Send a test event (${who})`, params: itemParams, responses: accepted(subscriptionSchemas.test) }),
  ];
}

const money = z.string().describe("USD, exact decimal text");
const budgetData = z.object({
  scope: z.string().describe("account:<id>, key:<id>, key_period:<id>, workspace:<id>, member:<workspace>:<account>, or a later kind (tag)"),
  scope_kind: z.string(),
  account_id: z.string().nullable(),
  workspace_id: z.string().nullable(),
  key_id: z.string().optional(),
  threshold_percent: z.union([z.literal(50), z.literal(80), z.literal(100)]),
  unit: z.enum(["USD", "tokens"]),
  used: z.string(),
  limit: z.string(),
  period: z.string().describe("The month (YYYY-MM), the key's period and its start, or lifetime"),
});
const reportData = z.object({
  subject: z.enum(["account", "workspace"]),
  subject_id: z.string(),
  period: z.enum(["daily", "weekly"]),
  from: isoTime,
  to: isoTime,
  spend_usd: money,
  requests: z.number().int(),
  top_models: z.array(z.object({ model: z.string(), spend_usd: money, requests: z.number().int() })),
  top_keys: z.array(z.object({ key_id: z.string(), name: z.string(), spend_usd: money, requests: z.number().int() })),
  budgets: z.array(z.object({ scope: z.string(), month: z.string(), limit_usd: money.nullable(), spent_usd: money })),
});
const EVENT_DATA: Record<AlertEventType, z.ZodType> = {
  "budget.threshold": budgetData,
  "key.exhausted": z.object({
    key_id: z.string(),
    account_id: z.string(),
    workspace_id: z.string().nullable(),
    unit: z.enum(["USD", "tokens"]),
    limit: z.string(),
    used: z.string(),
  }),
  "balance.depleted": z.object({ account_id: z.string(), balance_usd: money }),
  "provider_key.disabled": z.object({ key: z.string(), provider: z.string().nullable(), reason: z.string(), actor: z.string() }),
  "upstream.breaker_open": z.object({ scope: z.string().describe("The breaker's scope (a key fingerprint, never the key)"), opened_until: isoTime }),
  "config.changed": z.object({ action: z.string(), target_type: z.string(), target_id: z.string(), version: z.unknown(), previous_version: z.unknown(), actor: z.string() }),
  "ledger.verify_failed": z.object({ started_at: isoTime, differences: z.number().int(), summary: z.string() }),
  "credit.added": z.object({ account_id: z.string(), amount_usd: money, balance_usd: money, reason: z.string().nullable() }),
  "report.daily": reportData,
  "report.weekly": reportData,
  test: z.object({ message: z.string(), subscription_id: z.string() }),
};

/** The envelope of each event type as a zod schema (the JSON format's body). */
export function alertEnvelopeSchema(type: AlertEventType): z.ZodType {
  return z.object({ id: z.string(), type: z.literal(type), created_at: isoTime, data: EVENT_DATA[type] });
}

/** The document's webhooks: one POST per event type, signed with X-Gateway-Signature. */
export function alertWebhooks(jsonSchemaOf: (schema: z.ZodType, io: "input" | "output") => Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    ALERT_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          summary: `The ${type} alert event`,
          description:
            'Sent to each subscribed endpoint. JSON format: this body, with X-Gateway-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of `t.body` with the subscription\'s secret>; Slack format: {"text": ...}. A 2xx answer is a delivery; anything else is retried with backoff.',
          parameters: [
            { name: "X-Gateway-Signature", in: "header", required: true, schema: { type: "string" } },
            { name: "X-Gateway-Event", in: "header", required: true, schema: { type: "string" } },
            { name: "X-Gateway-Delivery", in: "header", required: true, schema: { type: "string" } },
          ],
          requestBody: { required: true, content: { "application/json": { schema: jsonSchemaOf(alertEnvelopeSchema(type), "output") } } },
          responses: { "200": { description: "Received (any 2xx)" } },
        },
      },
    ]),
  );
}

export const ALERT_DASHBOARD_OPERATIONS: readonly OperationSpec[] = [
  ...dashboardFamily("/workspaces/:id/alerts", "the workspace's owner", alertRouteSchemas.wsParams, alertRouteSchemas.wsSubscriptionParams),
  ...dashboardFamily("/admin/alerts", "administrators: every event", alertRouteSchemas.wsParams, alertRouteSchemas.adminSubscriptionParams),
  dash({
    method: "GET",
    path: "/reports/spend",
    summary: "The last whole day's or week's spend report of the signed-in account, or of a workspace (its owner or admins), as JSON or CSV",
    query: alertRouteSchemas.reportQuery,
    responses: { 200: { description: "The report", json: reportData, raw: [{ mediaType: "text/csv", description: "format=csv: section,name,spend_usd,requests" }] } },
  }),
];
