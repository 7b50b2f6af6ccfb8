// Card top-ups in the dashboard (docs/dashboard.md, "Card top-ups"; ADR 0039): the operator's bounds,
// and a Stripe Checkout Session for an amount within them, made for the signed-in account. The money
// arrives only through Stripe's signed webhook (src/http/routes/stripe-webhook.ts), never from here.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { createTopupCheckout } from "../../billing/stripe-client.js";
import type { StripeSettings } from "../../config/stripe-settings.js";
import { formatUsd, parseUsd } from "../../core/money.js";
import { GatewayError } from "../../errors/catalogue.js";
import type { RouteContext } from "../../http/route-context.js";
import { parseWith } from "../../admin/validate.js";

const checkoutBody = z.object({ amount_usd: z.union([z.string().max(20), z.number()]) }).strict();

/** Every request schema of this file (OpenAPI is generated from these). */
export const topupRouteSchemas = { checkoutBody };

function settingsOf(request: FastifyRequest): StripeSettings {
  const settings = request.snapshot.config.stripe;
  if (!settings) throw new GatewayError("not_found", "Card top-ups are not configured on this gateway.", { code: "stripe_not_configured" });
  return settings;
}

export function registerTopupRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get("/topup", async (request) => {
    const settings = request.snapshot.config.stripe;
    if (!settings) return { enabled: false, currency: null, min_usd: null, max_usd: null };
    return { enabled: true, currency: settings.currency, min_usd: formatUsd(settings.minTopup), max_usd: formatUsd(settings.maxTopup) };
  });

  app.post("/topup/checkout", async (request, reply) => {
    const settings = settingsOf(request);
    const me = request.dashboard.account;
    const { amount_usd } = parseWith(checkoutBody, request.body);
    const amount = parseUsd(amount_usd);
    if (amount === null || amount < settings.minTopup || amount > settings.maxTopup || amount % 10_000_000n !== 0n) {
      throw new GatewayError("invalid_request", `amount_usd: must be whole cents from ${formatUsd(settings.minTopup)} to ${formatUsd(settings.maxTopup)}`, { param: "amount_usd" });
    }
    // Back to the Usage page (where the balance is) at the address the browser used, unless configured.
    const base = `${request.snapshot.config.publicUrl ?? `${request.protocol}://${request.host}`}/dashboard/usage`;
    const session = await createTopupCheckout(settings, {
      accountId: me.id,
      amount,
      successUrl: settings.successUrl ?? `${base}?topup=success`,
      cancelUrl: settings.cancelUrl ?? `${base}?topup=cancelled`,
    });
    ctx.logger.info({ request_id: request.id, account_id: me.id, checkout_session: session.id, amount_usd: formatUsd(amount) }, "stripe checkout created");
    reply.code(201);
    return { id: session.id, url: session.url, amount_usd: formatUsd(amount) };
  });
}
