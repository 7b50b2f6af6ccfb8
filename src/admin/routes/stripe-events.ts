// /admin/v1/stripe/events: the Stripe events the gateway acted on (docs/billing.md, "Card top-ups"),
// newest first, and the operator's answer to a pending one: confirm (a refund or dispute debit the
// balance could not cover takes what it holds; a credit past the ceiling is tried again) or dismiss.
// Both audited; the dashboard and the CLI (`gateway stripe`) use the same operations.
import { z } from "zod";
import { formatUsd } from "../../core/money.js";
import { GatewayError } from "../../errors/catalogue.js";
import type { Store } from "../../store/index.js";
import { STRIPE_EVENT_STATUSES, type StripeEventRecord } from "../../store/stripe-events-store.js";
import type { StripeEventStatus } from "../../store/tables.js";
import { adminActor } from "../auth.js";
import { parseWith } from "../validate.js";
import { decodeCursor, encodeCursor } from "../views.js";
import { cursor, pageLimit, type AdminRoute } from "./route.js";

const eventId = z.string().min(1).max(255);

/** Every request schema of this file. */
export const stripeEventSchemas = {
  params: z.object({ id: eventId }),
  listQuery: z.object({
    limit: pageLimit,
    cursor,
    status: z.enum(STRIPE_EVENT_STATUSES as [StripeEventStatus, ...StripeEventStatus[]]).optional(),
  }),
};

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function stripeEventView(e: StripeEventRecord) {
  return {
    id: e.id,
    type: e.type,
    object_id: e.objectId,
    account_id: e.accountId,
    status: e.status,
    amount_usd: formatUsd(e.amount),
    applied_usd: formatUsd(e.applied),
    reason: e.reason,
    stripe_created_at: iso(e.stripeCreatedAt),
    received_at: iso(e.receivedAt),
    resolved_at: iso(e.resolvedAt),
    resolved_by: e.resolvedBy,
  };
}

/** One page of events, newest first. */
export async function stripeEventsPage(store: Store, q: z.infer<typeof stripeEventSchemas.listQuery>) {
  const before = q.cursor === undefined ? undefined : decodeCursor(q.cursor, 2);
  if (before && !/^\d{1,16}$/.test(before[0]!)) throw new GatewayError("invalid_request", "cursor is not a cursor this API returned", { param: "cursor" });
  const events = await store.stripeEvents.list({
    limit: q.limit + 1,
    ...(before && { before: { receivedAt: BigInt(before[0]!), id: before[1]! } }),
    ...(q.status !== undefined && { status: q.status }),
  });
  const page = events.slice(0, q.limit);
  const last = page.at(-1);
  const more = events.length > q.limit && last !== undefined;
  return { data: page.map(stripeEventView), nextCursor: more ? encodeCursor([String(last.receivedAt), last.id]) : null };
}

export const stripeEventRoutes: AdminRoute[] = [
  {
    method: "GET",
    url: "/stripe/events",
    scope: "credits:read",
    async handler(request, _reply, ctx) {
      const { data, nextCursor } = await stripeEventsPage(ctx.store, parseWith(stripeEventSchemas.listQuery, request.query, "query"));
      return { object: "list", data, has_more: nextCursor !== null, next_cursor: nextCursor };
    },
  },
  ...(["confirm", "dismiss"] as const).map((decision): AdminRoute => ({
    method: "POST",
    url: `/stripe/events/:id/${decision}`,
    scope: "credits:write",
    async handler(request, _reply, ctx) {
      const { id } = parseWith(stripeEventSchemas.params, request.params, "id");
      const record = await ctx.store.stripeEvents.resolve(id, decision, adminActor(request));
      return { event: stripeEventView(record) };
    },
  })),
];
