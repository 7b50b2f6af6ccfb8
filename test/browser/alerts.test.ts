// Alerts in a real browser (issue 45): an administrator opens Alerts from the admin navigation, adds a
// subscription to a local receiver (127.0.0.1, random port), sees the signing secret once, clicks
// "Send test event"; the receiver gets the event signed with that secret and the subscription's
// deliveries show it delivered. A workspace's owner sees the Alerts section on its page, a member
// does not. Shot at 1280 and 375 px into test-output/screenshots/ (alerts-*.png); no sideways scroll.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { parseUsd } from "../../src/core/money.js";
import { alertsConfig, signatureValid, startReceiver, waitFor, type Receiver } from "../alerts/support.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

describe.skipIf(SKIP_BROWSER)("alerts, in Chromium", () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let receiver: Receiver;
  let page: Page;
  let browser: Browser | undefined;
  let teamId = "";
  const admin = "alerts-admin@example.com";
  const owner = "alerts-owner@example.com";
  const member = "alerts-member@example.com";

  beforeAll(async () => {
    mock = await startMockUpstream();
    receiver = await startReceiver();
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, extra: alertsConfig() }));
    const store = gateway.app.ctx.store;
    const passwordHash = await hashPassword(BROWSER_PASSWORD);
    await store.accounts.create({ email: admin, tier: "standard", balance: parseUsd("5")!, passwordHash, isAdmin: true });
    const ownerAccount = await store.accounts.create({ email: owner, tier: "standard", balance: parseUsd("5")!, passwordHash });
    const memberAccount = await store.accounts.create({ email: member, tier: "standard", balance: parseUsd("5")!, passwordHash });
    const team = await store.workspaces.create("Atlas", ownerAccount.id);
    await store.workspaces.addMember(team.id, memberAccount.id, "member");
    teamId = team.id;
    browser = await openBrowser();
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
    await receiver?.close();
  });

  async function shotBoth(name: string) {
    await page.screenshot({ path: join(SHOTS, `alerts-${name}-1280.png`), fullPage: true });
    await page.setViewportSize({ width: 375, height: 800 });
    try {
      const wide = () =>
        page.evaluate<string>(`(() => {
          const width = document.documentElement.scrollWidth;
          if (width <= 375) return "fits";
          const offenders = [...document.querySelectorAll("body *")]
            .filter((el) => (el.getBoundingClientRect().right > 376 || el.scrollWidth > el.clientWidth + 1) && !el.parentElement?.closest(".table-scroll"))
            .slice(-5)
            .map((el) => el.tagName.toLowerCase() + "." + el.className + "(" + Math.round(el.getBoundingClientRect().right) + ")");
          return width + ": " + offenders.join(", ");
        })()`);
      await expect.poll(wide, { message: `${name} is wider than 375 px` }).toBe("fits");
      await page.screenshot({ path: join(SHOTS, `alerts-${name}-375.png`), fullPage: true });
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  }

  async function signIn(email: string) {
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByRole("button", { name: /^Sign (in|out)$/ }).waitFor();
    if (await page.getByRole("button", { name: "Sign out" }).count()) {
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("button", { name: "Sign in" }).waitFor();
    }
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(BROWSER_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
  }

  it("an administrator subscribes a receiver, sees the secret once, sends a test event and sees it delivered", async () => {
    await signIn(admin);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Alerts", exact: true }).click();
    await page.getByRole("heading", { name: "Alerts", level: 1 }).waitFor();
    await page.getByText("No subscriptions yet.").waitFor();

    const form = page.getByRole("form", { name: "Add an alert subscription" });
    await form.getByLabel("Endpoint URL").fill(receiver.url);
    await form.getByLabel("key.exhausted").check();
    await form.getByRole("button", { name: "Add subscription" }).click();
    const secretText = await page.getByTestId("alert-secret").locator("code").innerText();
    expect(secretText.length).toBeGreaterThanOrEqual(32);
    const [subscription] = await gateway.app.ctx.store.alerts.list(null);
    expect(subscription).toMatchObject({ url: receiver.url, events: ["budget.threshold", "key.exhausted"], enabled: true });
    const row = page.getByTestId(`alert-${subscription!.id}`);
    expect(await row.locator("td").allInnerTexts()).toEqual(["json", "budget.threshold, key.exhausted", "yes", expect.stringContaining("Send test event")]);
    await shotBoth("added");

    await row.getByRole("button", { name: "Send test event" }).click();
    await page.getByText("Test event queued.").waitFor();
    const got = await waitFor("the test event at the receiver", () => receiver.received.find((r) => r.body.includes('"type":"test"')));
    expect(signatureValid(secretText, got.headers["x-gateway-signature"] as string | undefined, got.body)).toBe(true);

    await row.getByRole("button", { name: "Deliveries" }).click();
    const deliveries = page.getByTestId("alert-deliveries");
    await expect
      .poll(async () => {
        await deliveries.getByRole("button", { name: "Refresh deliveries" }).click();
        return deliveries
          .getByTestId("delivery-test")
          .getByTestId("delivery-status")
          .innerText({ timeout: 1000 })
          .catch(() => "");
      })
      .toBe("delivered");
    expect(await deliveries.getByTestId("delivery-test").locator("td").allInnerTexts()).toEqual(["delivered", "1", "HTTP 200", "—", expect.any(String)]);
    await page.reload();
    await page.getByRole("heading", { name: "Alerts", level: 1 }).waitFor();
    await row.waitFor();
    // Shown once: after a reload the secret is nowhere on the page, and the API never returns it again.
    expect(await page.getByTestId("alert-secret").count()).toBe(0);
    expect(await page.content()).not.toContain(secretText);
    await shotBoth("delivered");

    await row.getByRole("button", { name: "Disable" }).click();
    await page.getByText("Subscription disabled.").waitFor();
    expect((await gateway.app.ctx.store.alerts.get(subscription!.id))?.enabled).toBe(false);
    await row.getByRole("button", { name: "Delete" }).click();
    const confirm = page.getByRole("alertdialog");
    await confirm.getByRole("button", { name: "Delete subscription" }).click();
    await page.getByText("Subscription deleted.").waitFor();
    expect(await gateway.app.ctx.store.alerts.list(null)).toEqual([]);
    await expect.poll(() => page.getByRole("link", { name: "CSV" }).count()).toBe(2);
  });

  it("a workspace's owner manages its alerts on the workspace page; a member sees no such section", async () => {
    await signIn(owner);
    await page.goto(`${gateway.url}/dashboard/workspaces/${teamId}`);
    await page.getByRole("heading", { name: "Alerts", level: 2 }).waitFor();
    await page.getByRole("form", { name: "Add an alert subscription" }).getByLabel("Endpoint URL").fill(receiver.url);
    await page.getByRole("button", { name: "Add subscription" }).click();
    await page.getByTestId("alert-secret").waitFor();
    const [sub] = await gateway.app.ctx.store.alerts.list(teamId);
    expect(sub?.workspaceId).toBe(teamId);
    const href = await page.getByTestId("spend-reports").getByRole("link", { name: "CSV" }).first().getAttribute("href");
    expect(href).toBe(`/dashboard/api/reports/spend?period=daily&format=csv&workspace_id=${teamId}`);
    await shotBoth("workspace");

    await signIn(member);
    await page.goto(`${gateway.url}/dashboard/workspaces/${teamId}`);
    await page.getByRole("heading", { name: "Atlas" }).waitFor();
    await page.getByRole("heading", { name: "Budgets" }).waitFor();
    expect(await page.getByRole("heading", { name: "Alerts" }).count()).toBe(0);
  });
});
