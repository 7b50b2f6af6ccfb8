// Card top-ups in Chromium at 1280 px (harness as in dashboard.test.ts): a signed-in user types an
// amount on the Usage page, clicks "Top up by card" and lands on the (mock) Stripe Checkout page the
// gateway created; after Stripe's signed event, the return address shows the notice and the balance.
// Screenshot: test-output/screenshots/topup-usage.png.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { checkoutCompleted, deliver, startMockStripe, stripeConfigSection, type MockStripe } from "../support/mock-stripe.js";

const SECRET = "whsec_browser_0001";

describe.skipIf(SKIP_BROWSER)("card top-ups in Chromium", () => {
  let stripe: MockStripe;
  let gateway: TestGateway;
  let browser: Browser | undefined;
  let page: Page;
  let accountId = "";
  const email = "topup-user@example.com";

  beforeAll(async () => {
    stripe = await startMockStripe();
    gateway = await startGateway(mockConfig({ openaiUrl: "http://127.0.0.1:9", extra: stripeConfigSection(stripe.url, SECRET) }));
    accountId = (await gateway.app.ctx.store.accounts.create({ email, tier: "standard", passwordHash: await hashPassword(BROWSER_PASSWORD) })).id;
    browser = await openBrowser();
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await stripe?.close();
  });

  it("the top-up button goes to the Checkout page the gateway created for the amount", { timeout: 120_000 }, async () => {
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(BROWSER_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
    await page.goto(`${gateway.url}/dashboard/usage`);
    const form = page.getByRole("form", { name: "Top up by card" });
    await form.getByLabel(/Amount \(USD/).fill("25.00");
    await page.screenshot({ path: join(SHOTS, "topup-usage.png") });
    await form.getByRole("button", { name: "Top up by card" }).click();
    await page.waitForURL(`${stripe.url}/pay/**`);
    const checkout = stripe.checkouts.at(-1)!;
    expect(page.url()).toBe(`${stripe.url}/pay/${checkout.sessionId}`);
    await page.getByRole("heading", { name: `Mock Checkout ${checkout.sessionId}` }).waitFor();
    expect(checkout.fields).toMatchObject({ client_reference_id: accountId, "line_items[0][price_data][unit_amount]": "2500" });

    // Stripe's event, then Checkout's return address: the notice and the credited balance.
    const paid = checkoutCompleted({ eventId: "evt_browser_1", sessionId: checkout.sessionId, accountId, cents: 2500, paymentIntent: "pi_browser_1" });
    expect((await deliver(gateway.url, paid, SECRET)).body.status).toBe("credited");
    await page.goto(checkout.fields.success_url!);
    await page.getByText("Payment received by Stripe").waitFor();
    await expect.poll(async () => page.getByTestId("balance").textContent()).toContain("25.00");
  });
});
