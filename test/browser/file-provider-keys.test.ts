// The config file's provider keys on the Catalog page in a real browser (catalog.source: file; harness
// as in provider-key-test.test.ts): listed by their last four characters, tested, disabled and
// enabled again; never removed here (the file is their truth) and no add form. Shot at 1280 and
// 375 px into test-output/screenshots/ (file-provider-keys-*.png).
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { parseUsd } from "../../src/core/money.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

describe.skipIf(SKIP_BROWSER)("the config file's provider keys in Chromium", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let page: Page;
  let browser: Browser | undefined;
  const email = "file-keys-admin@example.com";

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("O", { usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } }));
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, openaiKeys: ["sk-file-key-0001", "sk-file-key-0002"] }));
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

  it("tests, disables and enables a key of the file, and offers no remove or add", async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(BROWSER_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Catalog", exact: true }).click();
    await page.getByRole("heading", { name: "Provider keys" }).waitFor();
    const table = page.getByRole("table", { name: "Shared provider keys" });
    expect(await table.textContent()).toContain("keys[1] in the config file");
    expect(await page.getByRole("button", { name: /^Remove / }).count()).toBe(0);
    expect(await page.getByRole("form", { name: "Add a shared provider key" }).count()).toBe(0);

    await page.getByRole("button", { name: "Test mockai key …0002" }).click();
    const outcome = page.getByRole("region", { name: "Test of the mockai key …0002" });
    await outcome.waitFor();
    expect(await outcome.textContent()).toContain("HTTP 200");

    await page.getByRole("button", { name: "Disable mockai key …0001" }).click();
    await page.getByRole("button", { name: "Enable mockai key …0001" }).waitFor();
    expect(await table.getByRole("row", { name: /^mockai keys\[0\]/ }).textContent()).toContain("disabled");
    await page.screenshot({ path: join(SHOTS, "file-provider-keys-1280.png"), fullPage: true });
    await page.setViewportSize({ width: 375, height: 800 });
    await page.screenshot({ path: join(SHOTS, "file-provider-keys-375.png"), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.getByRole("button", { name: "Enable mockai key …0001" }).click();
    await page.getByRole("button", { name: "Disable mockai key …0001" }).waitFor();
    const audit = await gateway.app.ctx.store.audit.list({ limit: 10 });
    expect(audit.map((row) => row.action)).toEqual(expect.arrayContaining(["catalog.provider_key.disable", "catalog.provider_key.enable"]));
  });
});
