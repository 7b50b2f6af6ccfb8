// A local stand-in for the Stripe API (Checkout Session creation only) and Stripe's webhook events,
// signed with the package's own test-header helper: no request leaves 127.0.0.1.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";

export interface RecordedCheckout {
  /** The form-encoded body, decoded to flat keys as Stripe reads them (line_items[0][price_data][unit_amount]). */
  fields: Record<string, string>;
  authorization: string | undefined;
  sessionId: string;
}

export interface MockStripe {
  url: string;
  checkouts: RecordedCheckout[];
  /** The next checkout creation answers with this status (then back to 200). */
  failNext: number | null;
  close(): Promise<void>;
}

export async function startMockStripe(): Promise<MockStripe> {
  let counter = 0;
  const mock: MockStripe = { url: "", checkouts: [], failNext: null, close: async () => undefined };
  const server: Server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    request.on("end", () => {
      if (request.method === "POST" && request.url === "/v1/checkout/sessions") {
        if (mock.failNext !== null) {
          const status = mock.failNext;
          mock.failNext = null;
          response.writeHead(status, { "content-type": "application/json" });
          response.end(JSON.stringify({ error: { type: "api_error", message: "mock failure" } }));
          return;
        }
        const fields = Object.fromEntries(new URLSearchParams(body));
        const sessionId = `cs_test_mock_${++counter}`;
        mock.checkouts.push({ fields, authorization: request.headers.authorization, sessionId });
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ id: sessionId, object: "checkout.session", url: `${mock.url}/pay/${sessionId}`, payment_status: "unpaid" }));
        return;
      }
      if (request.method === "GET" && request.url?.startsWith("/pay/")) {
        response.writeHead(200, { "content-type": "text/html" });
        response.end(`<!doctype html><title>Mock Checkout</title><h1>Mock Checkout ${request.url.slice(5)}</h1>`);
        return;
      }
      response.writeHead(404, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { type: "invalid_request_error", message: "unknown mock route" } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  mock.close = () => new Promise((resolve) => server.close(() => resolve()));
  return mock;
}

/** The `stripe` config section pointing at the mock. */
export function stripeConfigSection(mockUrl: string, webhookSecret: string, extra = ""): string {
  return `
stripe:
  secret_key: sk_test_mock_key_0001
  webhook_secret: ${webhookSecret}
  min_topup_usd: "5.00"
  max_topup_usd: "500.00"
  api_base: ${mockUrl}
${extra}`;
}

const now = () => Math.floor(Date.now() / 1000);

export function checkoutCompleted(o: { eventId: string; sessionId: string; accountId: string; cents: number; paymentIntent: string; paymentStatus?: string; type?: string }) {
  return {
    id: o.eventId,
    object: "event",
    type: o.type ?? "checkout.session.completed",
    created: now(),
    livemode: false,
    data: {
      object: {
        id: o.sessionId,
        object: "checkout.session",
        client_reference_id: o.accountId,
        metadata: { account_id: o.accountId, purpose: "balance_top_up" },
        payment_status: o.paymentStatus ?? "paid",
        amount_total: o.cents,
        currency: "usd",
        payment_intent: o.paymentIntent,
      },
    },
  };
}

export function chargeRefunded(o: { eventId: string; chargeId: string; paymentIntent: string; amountRefunded: number; amount?: number }) {
  return {
    id: o.eventId,
    object: "event",
    type: "charge.refunded",
    created: now(),
    data: {
      object: {
        id: o.chargeId,
        object: "charge",
        amount: o.amount ?? 100_000,
        amount_refunded: o.amountRefunded,
        currency: "usd",
        payment_intent: o.paymentIntent,
        refunded: true,
      },
    },
  };
}

export function disputeCreated(o: { eventId: string; disputeId: string; paymentIntent: string; amount: number; reason?: string }) {
  return {
    id: o.eventId,
    object: "event",
    type: "charge.dispute.created",
    created: now(),
    data: { object: { id: o.disputeId, object: "dispute", amount: o.amount, currency: "usd", reason: o.reason ?? "fraudulent", payment_intent: o.paymentIntent, charge: "ch_x" } },
  };
}

/** POSTs an event to the gateway's webhook, signed with `secret` (at `timestamp`, seconds; default now). */
export async function deliver(gatewayUrl: string, event: unknown, secret: string, timestamp?: number): Promise<{ status: number; body: any }> {
  const payload = JSON.stringify(event);
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret, ...(timestamp !== undefined && { timestamp }) });
  const response = await fetch(`${gatewayUrl}/webhooks/stripe`, {
    method: "POST",
    headers: { "content-type": "application/json; charset=utf-8", "stripe-signature": signature },
    body: payload,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}
