// What a verified Stripe event asks of the ledger (docs/billing.md, "Card top-ups"): the fields the
// gateway reads, checked with bounds (a signed payload is still parsed as hostile input), as a
// StripeMoneyEvent for StripeEventsStore.apply. Types the gateway does not handle are ignored (200).
import { z } from "zod";
import type { StripeMoneyEvent } from "../store/stripe-events-store.js";

const stripeId = z.string().min(1).max(255);
const cents = z.number().int().min(0).max(99_999_999_999);
const nullableId = stripeId.nullable().optional();
const metadata = z.record(z.string().max(40), z.string().max(500)).nullable().optional();

const eventSchema = z.object({
  id: stripeId,
  type: z.string().min(1).max(200),
  created: z.number().int().min(0).max(99_999_999_999).optional(),
  data: z.object({ object: z.object({ id: stripeId.optional() }).loose() }),
});

const checkoutSessionSchema = z
  .object({
    id: stripeId,
    client_reference_id: nullableId,
    metadata,
    payment_status: z.string().max(40),
    amount_total: cents.nullable(),
    currency: z.string().max(10).nullable(),
    payment_intent: z
      .union([stripeId, z.object({ id: stripeId }).loose()])
      .nullable()
      .optional(),
  })
  .loose();

const chargeSchema = z
  .object({
    id: stripeId,
    amount_refunded: cents,
    currency: z.string().max(10),
    payment_intent: z
      .union([stripeId, z.object({ id: stripeId }).loose()])
      .nullable()
      .optional(),
  })
  .loose();

const disputeSchema = z
  .object({
    id: stripeId,
    amount: cents,
    currency: z.string().max(10),
    reason: z.string().max(100).nullable().optional(),
    payment_intent: z
      .union([stripeId, z.object({ id: stripeId }).loose()])
      .nullable()
      .optional(),
  })
  .loose();

/** The events that move money; every other type is recorded as ignored. */
export const HANDLED_STRIPE_EVENTS = ["checkout.session.completed", "checkout.session.async_payment_succeeded", "charge.refunded", "charge.dispute.created"] as const;

function idOf(value: string | { id: string } | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === "string" ? value : value.id;
}

/** Null when the payload is not a Stripe event at all (then the webhook answers 400). */
export function stripeMoneyEventOf(payload: unknown, currency: string): StripeMoneyEvent | null {
  const parsed = eventSchema.safeParse(payload);
  if (!parsed.success) return null;
  const event = parsed.data;
  const base = { eventId: event.id, type: event.type, createdAt: event.created === undefined ? null : event.created * 1000 };
  const objectId = event.data.object.id ?? "(none)";
  const ignore = (reason: string): StripeMoneyEvent => ({ ...base, kind: "ignore", objectId, reason });
  switch (event.type) {
    case "checkout.session.completed":
    case "checkout.session.async_payment_succeeded": {
      const session = checkoutSessionSchema.safeParse(event.data.object);
      if (!session.success) return ignore("not a Checkout Session the gateway can read");
      const s = session.data;
      if (s.metadata?.purpose !== "balance_top_up") return ignore("not a balance top-up");
      if (s.payment_status !== "paid") return ignore(`payment_status is ${s.payment_status}, not paid`);
      if (s.currency !== currency) return ignore(`currency ${s.currency ?? "(none)"}, not ${currency}`);
      const accountId = s.client_reference_id ?? s.metadata.account_id ?? null;
      return { ...base, kind: "credit", sessionId: s.id, accountId, paymentIntent: idOf(s.payment_intent), cents: BigInt(s.amount_total ?? 0) };
    }
    case "charge.refunded": {
      const charge = chargeSchema.safeParse(event.data.object);
      if (!charge.success) return ignore("not a charge the gateway can read");
      if (charge.data.currency !== currency) return ignore(`currency ${charge.data.currency}, not ${currency}`);
      return { ...base, kind: "refund", chargeId: charge.data.id, paymentIntent: idOf(charge.data.payment_intent), refundedCents: BigInt(charge.data.amount_refunded) };
    }
    case "charge.dispute.created": {
      const dispute = disputeSchema.safeParse(event.data.object);
      if (!dispute.success) return ignore("not a dispute the gateway can read");
      if (dispute.data.currency !== currency) return ignore(`currency ${dispute.data.currency}, not ${currency}`);
      const d = dispute.data;
      return { ...base, kind: "dispute", disputeId: d.id, paymentIntent: idOf(d.payment_intent), cents: BigInt(d.amount), reason: d.reason ?? "unspecified" };
    }
    default:
      return ignore("an event type the gateway does not handle");
  }
}
