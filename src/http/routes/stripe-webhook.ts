// POST /webhooks/stripe: Stripe's signed events for card top-ups (docs/api-contract.md, "Stripe
// webhook"; ADR 0039). The body is kept raw (the signature covers its exact bytes) by a content-type
// parser of this route's scope only, and bounded. A verified event is applied once per event id
// (StripeEventsStore.apply); a replay answers 200 and changes nothing; a refusal is 400 and a failure
// to record it a 5xx, which Stripe retries.
import type { FastifyInstance } from "fastify";
import { verifiedStripeEvent } from "../../billing/stripe-client.js";
import { stripeMoneyEventOf } from "../../billing/stripe-events.js";
import { formatUsd } from "../../core/money.js";
import { GatewayError } from "../../errors/catalogue.js";
import type { AuditActor } from "../../store/audit-store.js";
import type { RouteContext } from "../route-context.js";

export const STRIPE_WEBHOOK_PATH = "/webhooks/stripe";
/** Stripe's events are a few KiB; a checkout session with every field expanded stays well below this. */
export const STRIPE_WEBHOOK_BODY_LIMIT = 256 * 1024;

export function registerStripeWebhookRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: STRIPE_WEBHOOK_BODY_LIMIT }, (_request, body, done) => done(null, body));
    scope.post(STRIPE_WEBHOOK_PATH, { bodyLimit: STRIPE_WEBHOOK_BODY_LIMIT }, async (request) => {
      const settings = request.snapshot.config.stripe;
      if (!settings) throw new GatewayError("not_found", "Card top-ups are not configured on this gateway.", { code: "stripe_not_configured" });
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const signature = request.headers["stripe-signature"];
      const payload = await verifiedStripeEvent(settings, raw, typeof signature === "string" ? signature : undefined);
      const event = stripeMoneyEventOf(payload, settings.currency);
      if (!event) throw new GatewayError("invalid_request", "The body is not a Stripe event.", { code: "stripe_event_invalid", param: "body" });
      const actor: AuditActor = { type: "cli", id: null, name: "stripe webhook", clientAddress: request.ip, requestId: request.id };
      const { record, duplicate } = await ctx.store.stripeEvents.apply(event, actor);
      // A pending event waits for the operator (gateway admin stripe events --status pending): said louder.
      ctx.logger[record.status === "pending" && !duplicate ? "warn" : "info"](
        {
          request_id: request.id,
          stripe_event: record.id,
          stripe_type: record.type,
          status: record.status,
          duplicate,
          account_id: record.accountId,
          amount_usd: formatUsd(record.applied),
        },
        record.status === "pending" && !duplicate ? "stripe event pending: waiting for the operator" : "stripe event",
      );
      return { received: true, duplicate, status: record.status };
    });
  });
}
