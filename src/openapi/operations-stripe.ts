// Card top-ups' operations (ADR 0039): the dashboard's bounds and Checkout, the admin API's Stripe
// events and the operator's answer to a pending one, and Stripe's signed webhook.
import { z } from "zod";
import { stripeEventSchemas } from "../admin/routes/stripe-events.js";
import { topupRouteSchemas } from "../dashboard/routes/topup-routes.js";
import { admin, created, dash, ok, type OperationSpec } from "./operation-spec.js";
import { isoTime, usdText } from "./response-schema-parts.js";
import * as r from "./response-schemas.js";

/** stripeEventView (src/admin/routes/stripe-events.ts). */
const stripeEventSchema = z.object({
  id: z.string(),
  type: z.string(),
  object_id: z.string(),
  account_id: z.string().nullable(),
  status: z.enum(["credited", "debited", "pending", "confirmed", "dismissed", "ignored"]),
  amount_usd: usdText,
  applied_usd: usdText,
  reason: z.string().nullable(),
  stripe_created_at: isoTime.nullable(),
  received_at: isoTime,
  resolved_at: isoTime.nullable(),
  resolved_by: z.string().nullable(),
});

export const STRIPE_DASHBOARD_OPERATIONS: readonly OperationSpec[] = [
  dash({
    method: "GET",
    path: "/topup",
    summary: "Whether card top-ups are on, and the operator's bounds",
    responses: ok(z.object({ enabled: z.boolean(), currency: z.literal("usd").nullable(), min_usd: usdText.nullable(), max_usd: usdText.nullable() })),
  }),
  dash({
    method: "POST",
    path: "/topup/checkout",
    summary: "A Stripe Checkout Session for a top-up of the account (the credit comes from Stripe's webhook)",
    body: topupRouteSchemas.checkoutBody,
    responses: created(z.object({ id: z.string(), url: z.string(), amount_usd: usdText })),
  }),
];

export const STRIPE_ADMIN_OPERATIONS: readonly OperationSpec[] = [
  admin({
    method: "GET",
    path: "/stripe/events",
    summary: "Stripe events the gateway acted on, newest first (status=pending: those waiting for the operator)",
    query: stripeEventSchemas.listQuery,
    responses: ok(r.adminPage(stripeEventSchema)),
  }),
  admin({
    method: "POST",
    path: "/stripe/events/:id/confirm",
    summary: "Confirm a pending event: a debit takes what the balance holds, up to its amount; a credit is tried again",
    params: stripeEventSchemas.params,
    responses: ok(z.object({ event: stripeEventSchema })),
  }),
  admin({
    method: "POST",
    path: "/stripe/events/:id/dismiss",
    summary: "Dismiss a pending event: nothing reaches the ledger",
    params: stripeEventSchemas.params,
    responses: ok(z.object({ event: stripeEventSchema })),
  }),
];

export const STRIPE_WEBHOOK_OPERATIONS: readonly OperationSpec[] = [
  {
    method: "POST",
    route: "/webhooks/stripe",
    summary: "Stripe's signed events (Stripe-Signature, 300 s tolerance by default); each event id applied once",
    tag: "service",
    auth: "none",
    errorShape: "openai",
    headers: z.object({ "stripe-signature": z.string().max(2048) }),
    body: z.looseObject({ id: z.string(), type: z.string(), data: z.looseObject({ object: z.looseObject({}) }) }),
    responses: ok(
      z.object({
        received: z.literal(true),
        duplicate: z.boolean(),
        status: z.enum(["credited", "debited", "pending", "confirmed", "dismissed", "ignored"]),
      }),
      "Received: applied now, or before (duplicate)",
    ),
  },
];
