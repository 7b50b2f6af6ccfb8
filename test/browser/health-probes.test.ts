// The Upstreams page's health probes in a real browser (harness as in provider-key-test.test.ts): a
// deployment with health_check shows its interval and last probe, passing, then failing with the
// status and error after the upstream starts answering 503 (the gateway's clock is moved forward to
// make the next probe due). Shot at 1280 and 375 px into test-output/screenshots/ (health-probes-*.png).
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { parseUsd } from "../../src/core/money.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, sleep, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { probeConfig } from "../support/probe-config.js";

describe.skipIf(SKIP_BROWSER)("health probes on the Upstreams page in Chromium", () => {
  let primary: MockUpstream;
  let gateway: TestGateway;
  let page: Page;
  let browser: Browser | undefined;
  let failing = false;
  let offset = 0;
  const email = "probes-admin@example.com";

  beforeAll(async () => {
    primary = await startMockUpstream();
    primary.handler = (_req, res) => (failing ? json(res, 503, { error: { message: "overloaded" } }) : json(res, 200, chatCompletion("OK")));
    gateway = await startGateway(probeConfig(primary.url, primary.url), { now: () => Date.now() + offset });
    const hash = await hashPassword(BROWSER_PASSWORD);
    await gateway.app.ctx.store.accounts.create({ email, tier: "standard", balance: parseUsd("20")!, passwordHash: hash, isAdmin: true });
    browser = await openBrowser();
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await primary?.close();
  });

  const lastProbe = async () => (await gateway.app.ctx.store.healthProbes.all())[0];

  it("shows a deployment's probe passing, then failing", async () => {
    while ((await lastProbe()) === undefined) await sleep(50);
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(BROWSER_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Upstreams", exact: true }).click();
    const row = page.getByRole("table", { name: "Health probes" }).getByRole("row", { name: /routed\/first/ });
    await row.waitFor();
    expect(await row.textContent()).toContain("passing");
    expect(await row.textContent()).toContain("HTTP 200");
    expect(await row.textContent()).toContain("10 s");

    failing = true;
    offset += 11_000;
    while ((await lastProbe())!.ok) await sleep(50);
    await page.getByRole("button", { name: "Refresh", exact: true }).click();
    await page.getByRole("table", { name: "Health probes" }).getByText("failing").waitFor();
    expect(await row.textContent()).toContain("HTTP 503");
    await page.screenshot({ path: join(SHOTS, "health-probes-1280.png"), fullPage: true });
    await page.setViewportSize({ width: 375, height: 800 });
    await page.screenshot({ path: join(SHOTS, "health-probes-375.png"), fullPage: true });
  });
});
