// "Test" on a shared provider key in a real browser (harness as in catalog.test.ts): an
// administrator tests a working key and sees its status, latency and the operator's cost, then tests
// a key the upstream refuses and sees it refused and disabled. Shot at 1280 and 375 px (no sideways scrolling) into
// test-output/screenshots/ (provider-key-test-*.png).
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { parseUsd } from "../../src/core/money.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

const GOOD = "sk-browser-good-0002";
const BAD = "sk-browser-bad-0001";

describe.skipIf(SKIP_BROWSER)("testing a provider key in Chromium", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let page: Page;
  let browser: Browser | undefined;
  const email = "key-test-admin@example.com";

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (req, res) => {
      if (req.headers.authorization === `Bearer ${BAD}`) return json(res, 403, { error: { message: "forbidden", type: "permission_error" } });
      json(res, 200, chatCompletion("O", { usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } }));
    };
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, openaiKeys: [BAD, GOOD], extra: "catalog: { source: database }" }));
    const hash = await hashPassword(BROWSER_PASSWORD);
    await gateway.app.ctx.store.accounts.create({ email, tier: "standard", balance: parseUsd("20")!, passwordHash: hash, isAdmin: true });
    browser = await openBrowser();
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
  });

  /** Shots at 1280 and 375 px; at 375 the page must not scroll sideways. */
  async function shotBoth(name: string) {
    await page.screenshot({ path: join(SHOTS, `provider-key-test-${name}-1280.png`), fullPage: true });
    await page.setViewportSize({ width: 375, height: 800 });
    try {
      await expect.poll(() => page.evaluate<number>("document.documentElement.scrollWidth"), { message: `${name} is wider than 375 px` }).toBeLessThanOrEqual(375);
      await page.screenshot({ path: join(SHOTS, `provider-key-test-${name}-375.png`), fullPage: true });
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  }

  it("shows a working key's status, latency and cost, and a refused key disabled", async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(BROWSER_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Catalog", exact: true }).click();
    await page.getByRole("heading", { name: "Catalog", level: 1 }).waitFor();

    await page.getByRole("button", { name: "Test mockai key …0002" }).click();
    const outcome = page.getByRole("region", { name: "Test of the mockai key …0002" });
    await outcome.waitFor();
    const text = await outcome.textContent();
    expect(text).toContain("works");
    expect(text).toContain("HTTP 200");
    expect(text).toMatch(/\d+ ms/);
    // 10 input tokens at 1.00 and 1 output token at 2.00 USD per million: below the dashboard's
    // four decimals, so shown as "<$0.0001" with the exact amount in its title.
    const cost = outcome.getByTestId("key-test-cost");
    expect(await cost.textContent()).toBe("<$0.0001");
    expect(await cost.getAttribute("title")).toBe("$0.000012 exactly");
    expect(text).toContain("gpt-mock");
    await shotBoth("ok");

    await page.getByRole("button", { name: "Test mockai key …0001" }).click();
    const refused = page.getByRole("region", { name: "Test of the mockai key …0001" });
    await refused.waitFor();
    expect(await refused.textContent()).toContain("HTTP 403");
    expect(await refused.textContent()).toContain("disabled now");
    // The table follows: the refused key is disabled and can be enabled again.
    await page.getByRole("button", { name: "Enable mockai key …0001" }).waitFor();
    await shotBoth("refused");
  });
});
