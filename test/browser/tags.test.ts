// Tags in a real browser (docs/billing.md, "Tags and tag budgets"): an administrator's usage page shows
// the By tag table (and its CSV link) and the By workspace table for the requests of a key with a default tag and a header's tag; on Teams, the
// administrator sets a budget on a tag with the form, sees it with this month's spend, and removes it.
// Shot at 1280 px into test-output/screenshots/ (tags-*.png).
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { formatUsd, parseUsd } from "../../src/core/money.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { formatMoney } from "../../web/src/format.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

describe.skipIf(SKIP_BROWSER)("tags and tag budgets, in Chromium", () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let page: Page;
  let browser: Browser | undefined;
  let spent = "";
  const admin = "tags-admin@example.com";

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = async (_req, res) => json(res, 200, chatCompletion("ok", { usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 } }));
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }));
    const store = gateway.app.ctx.store;
    const account = await store.accounts.create({ email: admin, tier: "standard", balance: parseUsd("5")!, passwordHash: await hashPassword(BROWSER_PASSWORD), isAdmin: true });
    const { key, raw } = await store.keys.create({ accountId: account.id, name: "tagged", policy: { defaultTags: { project: "atlas" } } });
    const answer = await fetch(new URL("/v1/chat/completions", gateway.url), {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json", "x-gateway-tags": "env=prod" },
      body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], max_tokens: 100 }),
    });
    expect(answer.status).toBe(200);
    spent = formatUsd(BigInt((await store.db.selectFrom("ledger").select("cost_nano").where("key_id", "=", key.id).executeTakeFirstOrThrow()).cost_nano));
    browser = await openBrowser();
    page = browser.page;
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByLabel("Email").fill(admin);
    await page.getByLabel("Password").fill(BROWSER_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
  });

  it("the usage page breaks spend down by tag", async () => {
    await page.goto(`${gateway.url}/dashboard/usage`);
    const table = page.getByRole("table", { name: "By tag" });
    await table.waitFor();
    const rows = await table.locator("tbody tr").allInnerTexts();
    expect(rows.map((r) => r.split("\t").map((c) => c.trim()))).toEqual([
      ["env=prod", "1", "1100", formatMoney(spent)],
      ["project=atlas", "1", "1100", formatMoney(spent)],
    ]);
    // The table as CSV, from its caption's link: every digit, as the API gives it.
    const href = await table.getByRole("link", { name: "CSV" }).getAttribute("href");
    expect(decodeURIComponent(href!.replace(/^data:text\/csv;charset=utf-8,/, ""))).toBe(
      `tag,requests,tokens,cost_usd\r\nenv=prod,1,1100,${spent}\r\nproject=atlas,1,1100,${spent}\r\n`,
    );
    // The key is in no workspace.
    const workspaces = await page.getByRole("table", { name: "By workspace" }).locator("tbody tr").allInnerTexts();
    expect(workspaces.map((r) => r.split("\t").map((c) => c.trim()))).toEqual([["(no workspace)", "1", "1000", "100", formatMoney(spent)]]);
    await page.screenshot({ path: join(SHOTS, "tags-usage-1280.png"), fullPage: true });
  });

  it("an administrator sets a budget on a tag on Teams, sees its spend, and removes it", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Teams", exact: true }).click();
    await page.getByRole("heading", { name: "Tag budgets" }).waitFor();
    const form = page.getByRole("form", { name: "Set a tag budget" });
    await form.getByLabel("Tag").fill("project=atlas");
    await form.getByLabel("USD per month").fill("2");
    await form.getByRole("button", { name: "Set budget" }).click();
    const row = page.getByTestId("tag-budget-project=atlas");
    await row.waitFor();
    // A new budget starts from the month's spend with the tag.
    expect(await row.locator("td").allInnerTexts()).toEqual([
      "every account",
      formatMoney("2.00"),
      formatMoney(spent),
      formatMoney(formatUsd(parseUsd("2")! - parseUsd(spent)!)),
      "1100 used",
      "Remove",
    ]);
    await page.screenshot({ path: join(SHOTS, "tags-teams-1280.png"), fullPage: true });
    await row.getByRole("button", { name: "Remove the budget on project=atlas" }).click();
    await expect.poll(() => page.getByTestId("tag-budget-project=atlas").count()).toBe(0);
  });
});
