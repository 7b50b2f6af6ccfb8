// Card top-ups end to end (docs/billing.md, "Card top-ups"): a signed-in user creates a Checkout
// Session (the mock Stripe API records what was asked), then Stripe's signed events move money
// through the webhook exactly once per event: replays, wrong signatures, stale timestamps, unknown
// types, refunds and disputes, a debit the balance cannot cover held for the operator, and a
// failure injected into the credit's transaction that leaves nothing until Stripe's retry.
import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chargeRefunded, checkoutCompleted, deliver, disputeCreated, startMockStripe, stripeConfigSection, type MockStripe } from "../support/mock-stripe.js";
import { signedInAccount, type DashboardClient } from "../dashboard/support.js";

const SECRET = "whsec_test_gateway_secret_0001";

describe.each(DATABASE_KINDS)("card top-ups with Stripe on %s", (kind) => {
  let gateway: TestGateway;
  let stripe: MockStripe;
  let user: { client: DashboardClient; account: { id: string } };
  let seq = 0;
  const unique = (prefix: string) => `${prefix}_${kind}_${++seq}_${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    stripe = await startMockStripe();
    gateway = await startGateway(mockConfig({ openaiUrl: "http://127.0.0.1:9", extra: stripeConfigSection(stripe.url, SECRET) }), { kind });
    user = await signedInAccount(gateway, { balance: "0" });
  });
  afterAll(async () => {
    await gateway?.close();
    await stripe?.close();
  });

  const balanceOf = async (accountId: string) => (await gateway.app.ctx.store.accounts.get(accountId))!.balance;
  const ledgerRows = async (accountId: string) =>
    gateway.app.ctx.store.db.selectFrom("ledger").select(["kind", "cost_nano", "note"]).where("account_id", "=", accountId).orderBy("id").execute();
  const auditOf = (eventId: string) => gateway.app.ctx.store.audit.list({ targetType: "stripe_event", targetId: eventId, limit: 10 });

  it("a user creates a checkout, and the signed completed event credits the balance once", async () => {
    const bounds = await user.client.get("/topup");
    expect(bounds.body).toEqual({ enabled: true, currency: "usd", min_usd: "5.00", max_usd: "500.00" });
    const created = await user.client.post("/topup/checkout", { amount_usd: "12.34" });
    expect(created.status, created.text).toBe(201);
    expect(created.body.url).toBe(`${stripe.url}/pay/${created.body.id}`);
    const recorded = stripe.checkouts.at(-1)!;
    expect(recorded.authorization).toBe("Bearer sk_test_mock_key_0001");
    expect(recorded.fields).toMatchObject({
      mode: "payment",
      client_reference_id: user.account.id,
      "metadata[account_id]": user.account.id,
      "line_items[0][price_data][unit_amount]": "1234",
      "line_items[0][price_data][currency]": "usd",
      "payment_intent_data[metadata][account_id]": user.account.id,
    });
    expect(recorded.fields.success_url).toBe(`${gateway.url}/dashboard/usage?topup=success`);

    const event = checkoutCompleted({ eventId: unique("evt"), sessionId: created.body.id, accountId: user.account.id, cents: 1234, paymentIntent: unique("pi") });
    const first = await deliver(gateway.url, event, SECRET);
    expect(first).toEqual({ status: 200, body: { received: true, duplicate: false, status: "credited" } });
    expect(await balanceOf(user.account.id)).toBe(12_340_000_000n);
    // Stripe retries: 200, nothing more.
    const replay = await deliver(gateway.url, event, SECRET);
    expect(replay).toEqual({ status: 200, body: { received: true, duplicate: true, status: "credited" } });
    expect(await balanceOf(user.account.id)).toBe(12_340_000_000n);
    const credits = (await ledgerRows(user.account.id)).filter((r) => r.kind === "credit");
    expect(credits).toHaveLength(1);
    expect(credits[0]).toMatchObject({ cost_nano: 12_340_000_000n, note: `stripe top-up ${created.body.id} (${event.id})` });
    const audit = await auditOf(event.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      action: "stripe.event",
      actor: { type: "cli", name: "stripe webhook" },
      after: { status: "credited", amount_usd: "12.34", account_id: user.account.id },
    });
    // The same session brought again by another event (async_payment_succeeded) credits nothing.
    const again = checkoutCompleted({
      eventId: unique("evt"),
      sessionId: created.body.id,
      accountId: user.account.id,
      cents: 1234,
      paymentIntent: "pi_other",
      type: "checkout.session.async_payment_succeeded",
    });
    expect((await deliver(gateway.url, again, SECRET)).body).toMatchObject({ duplicate: false, status: "ignored" });
    expect(await balanceOf(user.account.id)).toBe(12_340_000_000n);
  });

  it("refuses amounts outside the bounds and a failing Stripe API, charging nothing", async () => {
    for (const amount_usd of ["4.99", "500.01", "10.001", "ten"]) {
      const refused = await user.client.post("/topup/checkout", { amount_usd });
      expect(refused.status, amount_usd).toBe(400);
      expect(refused.body.error.param).toBe("amount_usd");
    }
    stripe.failNext = 500;
    const failed = await user.client.post("/topup/checkout", { amount_usd: "10" });
    expect(failed.status).toBe(502);
    expect(failed.body.error.code).toBe("stripe_checkout_failed");
    expect(failed.text).not.toContain("sk_test_mock_key_0001");
  });

  it("wrong signature 400, stale timestamp 400, unknown type 200 ignored, unpaid 200 ignored", async () => {
    const before = await balanceOf(user.account.id);
    const event = checkoutCompleted({ eventId: unique("evt"), sessionId: unique("cs"), accountId: user.account.id, cents: 500, paymentIntent: unique("pi") });
    const wrong = await deliver(gateway.url, event, "whsec_not_the_secret");
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe("stripe_signature_invalid");
    const stale = await deliver(gateway.url, event, SECRET, Math.floor(Date.now() / 1000) - 301);
    expect(stale.status).toBe(400);
    expect(stale.body.error.code).toBe("stripe_signature_stale");
    const unsigned = await fetch(`${gateway.url}/webhooks/stripe`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(event) });
    expect(unsigned.status).toBe(400);
    expect(await balanceOf(user.account.id)).toBe(before);
    expect(await gateway.app.ctx.store.stripeEvents.get(event.id)).toBeNull();

    const unknown = { id: unique("evt"), object: "event", type: "customer.created", created: 1, data: { object: { id: "cus_1", object: "customer" } } };
    expect(await deliver(gateway.url, unknown, SECRET)).toEqual({ status: 200, body: { received: true, duplicate: false, status: "ignored" } });
    const unpaid = checkoutCompleted({
      eventId: unique("evt"),
      sessionId: unique("cs"),
      accountId: user.account.id,
      cents: 500,
      paymentIntent: unique("pi"),
      paymentStatus: "unpaid",
    });
    expect((await deliver(gateway.url, unpaid, SECRET)).body.status).toBe("ignored");
    expect(await balanceOf(user.account.id)).toBe(before);
    expect((await auditOf(unknown.id))[0]!.after).toMatchObject({ status: "ignored", reason: "an event type the gateway does not handle" });
    // The same signature over a body too large to be an event: 413 before anything is parsed.
    const big = await fetch(`${gateway.url}/webhooks/stripe`, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": "t=1,v1=00" },
      body: "x".repeat(300 * 1024),
    });
    expect(big.status).toBe(413);
  });

  it("refunds and disputes write debits with their reason; one the balance cannot cover waits for the operator", async () => {
    const { account } = await signedInAccount(gateway, { balance: "0" });
    const pi = unique("pi");
    await deliver(gateway.url, checkoutCompleted({ eventId: unique("evt"), sessionId: unique("cs"), accountId: account.id, cents: 5000, paymentIntent: pi }), SECRET);
    expect(await balanceOf(account.id)).toBe(50_000_000_000n);
    // A partial refund of 10.00, then the charge's cumulative 15.00: 10.00 and 5.00 debited; a replay nothing.
    const refund1 = chargeRefunded({ eventId: unique("evt"), chargeId: "ch_1", paymentIntent: pi, amountRefunded: 1000 });
    expect((await deliver(gateway.url, refund1, SECRET)).body.status).toBe("debited");
    const refund2 = chargeRefunded({ eventId: unique("evt"), chargeId: "ch_1", paymentIntent: pi, amountRefunded: 1500 });
    expect((await deliver(gateway.url, refund2, SECRET)).body.status).toBe("debited");
    expect((await deliver(gateway.url, refund2, SECRET)).body.duplicate).toBe(true);
    expect(await balanceOf(account.id)).toBe(35_000_000_000n);
    const dispute = disputeCreated({ eventId: unique("evt"), disputeId: "dp_1", paymentIntent: pi, amount: 2000, reason: "fraudulent" });
    expect((await deliver(gateway.url, dispute, SECRET)).body.status).toBe("debited");
    expect(await balanceOf(account.id)).toBe(15_000_000_000n);
    const debits = (await ledgerRows(account.id)).filter((r) => r.kind === "debit");
    expect(debits.map((d) => d.cost_nano)).toEqual([10_000_000_000n, 5_000_000_000n, 20_000_000_000n]);
    expect(debits[2]!.note).toBe(`stripe dispute dp_1: fraudulent (${dispute.id})`);
    expect(debits[0]!.note).toContain("refund of ch_1");

    // A second dispute of 20.00 against a balance of 15.00: held, nothing debited.
    const held = disputeCreated({ eventId: unique("evt"), disputeId: "dp_2", paymentIntent: pi, amount: 2000 });
    expect((await deliver(gateway.url, held, SECRET)).body.status).toBe("pending");
    expect(await balanceOf(account.id)).toBe(15_000_000_000n);
    expect(gateway.logs.find((line) => line.stripe_event === held.id)).toMatchObject({ level: 40, msg: "stripe event pending: waiting for the operator" });
    const token = (await gateway.app.ctx.store.adminTokens.create({ name: `ops-${kind}`, scopes: ["credits:read", "credits:write"] })).raw;
    const api = async (method: string, path: string) => {
      const response = await fetch(`${gateway.url}/admin/v1${path}`, { method, headers: { authorization: `Bearer ${token}` } });
      return { status: response.status, body: (await response.json()) as any };
    };
    const pending = await api("GET", "/stripe/events?status=pending");
    expect(pending.body.data.map((e: { id: string }) => e.id)).toContain(held.id);
    // Confirmed: the debit takes what the balance holds, never below zero.
    const confirmed = await api("POST", `/stripe/events/${held.id}/confirm`);
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.event).toMatchObject({ status: "confirmed", amount_usd: "20.00", applied_usd: "15.00", resolved_by: `ops-${kind}` });
    expect(await balanceOf(account.id)).toBe(0n);
    expect((await api("POST", `/stripe/events/${held.id}/dismiss`)).status).toBe(409);
    const audit = await auditOf(held.id);
    expect(audit.map((a) => a.action)).toEqual(["stripe.confirm", "stripe.event"]);
    // Another held and dismissed: nothing reaches the ledger.
    const other = disputeCreated({ eventId: unique("evt"), disputeId: "dp_3", paymentIntent: pi, amount: 100 });
    expect((await deliver(gateway.url, other, SECRET)).body.status).toBe("pending");
    const dismissed = await api("POST", `/stripe/events/${other.id}/dismiss`);
    expect(dismissed.body.event).toMatchObject({ status: "dismissed", applied_usd: "0.00" });
    expect((await ledgerRows(account.id)).length).toBe(5);
    // A refund for a payment this gateway never credited changes nothing.
    expect((await deliver(gateway.url, chargeRefunded({ eventId: unique("evt"), chargeId: "ch_x", paymentIntent: "pi_unknown", amountRefunded: 100 }), SECRET)).body.status).toBe(
      "ignored",
    );
  });

  it("the CLI lists pending events and dismisses one, audited as the CLI", async () => {
    const { account } = await signedInAccount(gateway, { balance: "0" });
    const pi = unique("pi");
    await deliver(gateway.url, checkoutCompleted({ eventId: unique("evt"), sessionId: unique("cs"), accountId: account.id, cents: 600, paymentIntent: pi }), SECRET);
    const held = disputeCreated({ eventId: unique("evt"), disputeId: unique("dp"), paymentIntent: pi, amount: 900 });
    expect((await deliver(gateway.url, held, SECRET)).body.status).toBe("pending");
    const cli = async (argv: string[]) => {
      let stdout = "";
      const code = await runCli([...argv, "--json"], {
        stdout: (text) => void (stdout += text),
        stderr: () => undefined,
        env: { ...gateway.database.env, GATEWAY_CONFIG: gateway.configPath },
        cwd: dirname(gateway.configPath),
      });
      return { code, body: stdout ? JSON.parse(stdout) : null };
    };
    const listed = await cli(["admin", "stripe", "events", "--status", "pending"]);
    expect(listed.code).toBe(0);
    expect(listed.body.map((e: { id: string }) => e.id)).toContain(held.id);
    const dismissed = await cli(["admin", "stripe", "dismiss", held.id]);
    expect(dismissed).toMatchObject({ code: 0, body: { id: held.id, status: "dismissed", applied_usd: "0.00" } });
    expect(await balanceOf(account.id)).toBe(6_000_000_000n);
    expect((await auditOf(held.id))[0]).toMatchObject({ action: "stripe.dismiss", actor: { type: "cli" } });
    expect((await cli(["admin", "stripe", "confirm", held.id])).code).not.toBe(0);
  });

  it("a failure injected after the ledger credit leaves no credit and no event row; Stripe's retry credits once", async () => {
    const { account } = await signedInAccount(gateway, { balance: "0" });
    const event = checkoutCompleted({ eventId: unique("evt"), sessionId: unique("cs"), accountId: account.id, cents: 777, paymentIntent: unique("pi") });
    gateway.app.ctx.store.stripeEvents.failOnce = "after_ledger";
    const failed = await deliver(gateway.url, event, SECRET);
    expect(failed.status).toBe(500);
    expect(await balanceOf(account.id)).toBe(0n);
    expect(await ledgerRows(account.id)).toHaveLength(0);
    expect(await gateway.app.ctx.store.stripeEvents.get(event.id)).toBeNull();
    expect(await auditOf(event.id)).toHaveLength(0);
    const retried = await deliver(gateway.url, event, SECRET);
    expect(retried.body).toEqual({ received: true, duplicate: false, status: "credited" });
    expect(await balanceOf(account.id)).toBe(7_770_000_000n);
    expect(await ledgerRows(account.id)).toHaveLength(1);
    expect(await gateway.app.ctx.store.ledger.verify()).toMatchObject({ broken: null });
  });
});
