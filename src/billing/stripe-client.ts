// The Stripe SDK, loaded at first use (ADR 0031: a gateway without top-ups never loads it): Checkout
// Sessions for card top-ups and the webhook signature check (docs/billing.md, "Card top-ups").
import type { Nano } from "../core/money.js";
import { GatewayError } from "../errors/catalogue.js";

/** The `stripe` section as the gateway uses it (config/stripe-settings.ts reads it). */
export interface StripeSettings {
  secretKey: string;
  webhookSecret: string;
  /** ISO currency, lower case; only usd (the ledger counts nano-USD). */
  currency: "usd";
  minTopup: Nano;
  maxTopup: Nano;
  /** Where Checkout sends the payer back; null: the dashboard's Usage page at the address the browser used. */
  successUrl: string | null;
  cancelUrl: string | null;
  /** How old a signed webhook may be, in seconds (Stripe-Signature's t=). */
  toleranceS: number;
  /** The Stripe API's address; null: Stripe's own (api.stripe.com over https). */
  api: { protocol: "http" | "https"; host: string; port: number } | null;
  timeoutMs: number;
}

type StripeModule = typeof import("stripe");
type StripeClient = InstanceType<StripeModule["default"]>;

let loaded: Promise<StripeModule["default"]> | null = null;
const clients = new Map<string, StripeClient>();

function stripeClass(): Promise<StripeModule["default"]> {
  loaded ??= import("stripe").then((module) => module.default);
  return loaded;
}

/** One client per key and address (a reload may change either). */
async function clientFor(settings: StripeSettings): Promise<StripeClient> {
  const id = JSON.stringify([settings.secretKey, settings.api, settings.timeoutMs]);
  let client = clients.get(id);
  if (!client) {
    const Stripe = await stripeClass();
    client = new Stripe(settings.secretKey, {
      timeout: settings.timeoutMs,
      // The dashboard's request waits for this one: no retries behind the person's back.
      maxNetworkRetries: 0,
      telemetry: false,
      ...(settings.api && { protocol: settings.api.protocol, host: settings.api.host, port: settings.api.port }),
    });
    clients.set(id, client);
  }
  return client;
}

export interface TopupCheckout {
  accountId: string;
  amount: Nano;
  successUrl: string;
  cancelUrl: string;
}

/** Cents of a whole-cent nano-USD amount (the caller has checked it is whole cents). */
export function centsOf(amount: Nano): number {
  return Number(amount / 10_000_000n);
}

/**
 * A Checkout Session paying `amount` into the account: client_reference_id and metadata name the
 * account (the webhook credits it), the payment intent carries the same metadata. Returns Stripe's
 * session id and the URL the browser goes to. Stripe refusing or unreachable: 502 provider_error.
 */
export async function createTopupCheckout(settings: StripeSettings, input: TopupCheckout): Promise<{ id: string; url: string }> {
  const stripe = await clientFor(settings);
  const metadata = { account_id: input.accountId, purpose: "balance_top_up" };
  let session: { id: string; url: string | null };
  try {
    session = await stripe.checkout.sessions.create({
      mode: "payment",
      client_reference_id: input.accountId,
      metadata,
      payment_intent_data: { metadata },
      line_items: [
        {
          quantity: 1,
          price_data: { currency: settings.currency, unit_amount: centsOf(input.amount), product_data: { name: "Model Gateway balance top-up" } },
        },
      ],
      success_url: input.successUrl,
      cancel_url: input.cancelUrl,
    });
  } catch (error) {
    const status = (error as { statusCode?: unknown }).statusCode;
    throw new GatewayError("provider_error", `Stripe did not create the checkout${typeof status === "number" ? ` (HTTP ${status})` : ""}; nothing was charged. Try again later.`, {
      code: "stripe_checkout_failed",
    });
  }
  if (!session.url) throw new GatewayError("provider_error", "Stripe returned a checkout without a URL; nothing was charged.", { code: "stripe_checkout_failed" });
  return { id: session.id, url: session.url };
}

/**
 * The event in a webhook's raw body, once its Stripe-Signature header is verified with the endpoint
 * secret and is no older than the tolerance. Anything else: 400 invalid_request.
 */
export async function verifiedStripeEvent(settings: StripeSettings, rawBody: Buffer, signature: string | undefined): Promise<unknown> {
  if (!signature) throw new GatewayError("invalid_request", "The Stripe-Signature header is missing.", { code: "stripe_signature_invalid", param: "stripe-signature" });
  const Stripe = await stripeClass();
  try {
    return Stripe.webhooks.constructEvent(rawBody, signature, settings.webhookSecret, settings.toleranceS);
  } catch (error) {
    const stale = /timestamp outside the tolerance/i.test((error as Error).message);
    throw new GatewayError("invalid_request", stale ? "The Stripe-Signature timestamp is outside the tolerance." : "The Stripe-Signature header does not verify.", {
      code: stale ? "stripe_signature_stale" : "stripe_signature_invalid",
      param: "stripe-signature",
    });
  }
}
