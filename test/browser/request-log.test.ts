// The Requests page (the request log, docs/dashboard.md) in Chromium: playwright-core driving
// Debian's Chromium (/usr/bin/chromium) against a real gateway and a mock upstream, as in
// dashboard.test.ts. A customer finds a failed request by its request id with the keyboard alone,
// pages the log and downloads it as CSV; an administrator finds an unattributed request. Screenshots
// at 1280 and 375 px go to test-output/screenshots/.
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { parseUsd } from "../../src/core/money.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

describe.skipIf(SKIP_BROWSER)("request log in Chromium", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let context: BrowserContext;
  let page: Page;
  let browser: Browser | undefined;
  const emails = { admin: "log-admin@example.com", user: "log-user@example.com" };
  let raw: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("hello", { usage: { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500 } }));
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }));
    const store = gateway.app.ctx.store;
    const hash = await hashPassword(BROWSER_PASSWORD);
    await store.accounts.create({ email: emails.admin, tier: "standard", balance: parseUsd("20")!, passwordHash: hash, isAdmin: true });
    const user = await store.accounts.create({ email: emails.user, tier: "standard", balance: parseUsd("20")!, passwordHash: hash });
    raw = (await store.keys.create({ accountId: user.id, name: "ci key", budgetCap: null, tokenCap: null })).raw;
    browser = await openBrowser();
    context = browser.context;
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
  });

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  const chat = (key: string | null, model = "gpt-mock") =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { ...(key !== null && { authorization: `Bearer ${key}` }), "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
    });

  async function signIn(email: string) {
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(BROWSER_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
  }

  /** The element with focus has a visible outline (styles.css :focus-visible). */
  const focusOutline = () => page.evaluate<string>("getComputedStyle(document.activeElement).outlineStyle");

  it("finds a failed request by its request id, with the keyboard, at 1280 and 375 px", async () => {
    // 30 answered requests (more than a page), then one the upstream fails.
    for (let i = 0; i < 30; i++) expect((await chat(raw)).status).toBe(200);
    mock.handler = (_req, res) => json(res, 500, { error: { message: "upstream down" } });
    const failed = await chat(raw);
    expect(failed.status).toBeGreaterThanOrEqual(500);
    const failedId = failed.headers.get("x-request-id")!;
    const failedType = ((await failed.json()) as { error: { type: string } }).error.type;
    mock.handler = (_req, res) => json(res, 200, chatCompletion("hello", { usage: { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500 } }));
    await gateway.app.ctx.pipeline.requestLog!.flush();

    await signIn(emails.user);
    await page.getByRole("link", { name: "Requests", exact: true }).click();
    await page.getByRole("heading", { name: "Requests", exact: true }).waitFor();
    const table = page.getByRole("table", { name: "Requests, newest first" });
    await expect.poll(() => table.getByRole("row").count()).toBe(26); // the header and a page of 25
    expect(await page.getByRole("navigation", { name: "Main" }).locator('[aria-current="page"]').allTextContents()).toEqual(["Requests"]);
    await shot("request-log-01-list-1280");

    // Keyboard only: from the Request ID field, type the id, Enter submits the filter form.
    await page.getByLabel("Request ID").focus();
    expect(await focusOutline()).toBe("solid");
    await page.keyboard.type(failedId);
    await page.keyboard.press("Enter");
    await expect.poll(() => table.getByRole("row").count()).toBe(2);
    const row = table.getByRole("row").nth(1);
    const text = await row.textContent();
    expect(text).toContain(failedId);
    expect(text).toContain(String(failed.status));
    expect(text).toContain(failedType);
    expect(text).toContain("gpt-mock");
    expect(text).toContain("ci key");
    await shot("request-log-02-found-by-id-1280");

    // Every filter field has a label and Tab reaches each of them, then the buttons.
    for (const label of ["Request ID", "Key", "Model", "Status", "From", "Until"]) expect(await page.getByLabel(label, { exact: true }).count()).toBe(1);
    await page.getByLabel("Request ID").focus();
    const focusedName = () => page.evaluate<string>('(document.activeElement?.labels?.[0] ?? document.activeElement)?.textContent?.trim() ?? ""');
    const order: string[] = [];
    // The date fields take several Tabs (one per part of the date) in Chromium.
    for (let i = 0; i < 30 && order[order.length - 1] !== "Apply filters"; i++) {
      await page.keyboard.press("Tab");
      const name = await focusedName();
      order.push(name);
      // Our :focus-visible outline on each stop; Chromium marks the focused part of a date field itself.
      if (name !== "From" && name !== "Until") expect(await focusOutline(), name).toBe("solid");
    }
    expect(order.slice(0, 3)).toEqual(["Key", "Model", "Status"]);
    expect(order).toContain("From");
    expect(order).toContain("Until");
    expect(order[order.length - 1]).toBe("Apply filters");

    await page.setViewportSize({ width: 375, height: 800 });
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    expect(await row.getByRole("cell").first().isVisible()).toBe(true);
    // The table scrolls sideways inside its region, which takes focus so a keyboard can scroll it.
    await page.getByRole("region", { name: "Requests, newest first" }).focus();
    expect(await focusOutline()).toBe("solid");
    await shot("request-log-03-found-by-id-375");
    await page.setViewportSize({ width: 1280, height: 900 });

    // The CSV of the filtered log: the same row, fetched with the page's own session.
    const href = await page.getByRole("link", { name: "Download these requests as CSV" }).getAttribute("href");
    expect(href).toContain(`request_id=${failedId}`);
    const csv = await context.request.get(`${gateway.url}${href}`);
    expect(csv.status()).toBe(200);
    const lines = (await csv.text()).trim().split("\r\n");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(failedId);
  });

  it("pages with Older and Newer, by keyboard, and filters by status", async () => {
    await page.getByRole("button", { name: "Clear" }).click();
    const table = page.getByRole("table", { name: "Requests, newest first" });
    await expect.poll(() => table.getByRole("row").count()).toBe(26);
    const first = await table.getByRole("row").nth(1).textContent();
    await page.getByRole("button", { name: "Older" }).focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => table.getByRole("row").count()).toBe(7); // 31 rows: 25, then 6
    expect(await page.getByRole("button", { name: "Older" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Newer" }).focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => table.getByRole("row").nth(1).textContent()).toBe(first);
    await page.getByLabel("Status").selectOption("error");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(() => table.getByRole("row").count()).toBe(2);
    await shot("request-log-04-errors-1280");
  });

  it("shows an administrator the requests of every account and those without a valid key", async () => {
    const anonymous = await chat("mgw_not-a-real-key");
    expect(anonymous.status).toBe(401);
    const anonymousId = anonymous.headers.get("x-request-id")!;
    await gateway.app.ctx.pipeline.requestLog!.flush();
    await page.getByRole("button", { name: "Sign out" }).click();
    await signIn(emails.admin);
    await page.getByRole("link", { name: "Requests", exact: true }).click();
    const table = page.getByRole("table", { name: "Requests, newest first" });
    // Their own view: the administrator made no requests.
    await expect.poll(() => table.textContent()).toContain("No requests match.");
    await page.getByLabel("All accounts (administrator)").check();
    await page.getByLabel("Request ID").fill(anonymousId);
    await page.getByLabel("Request ID").press("Enter");
    await expect.poll(() => table.getByRole("row").count()).toBe(2);
    const text = await table.getByRole("row").nth(1).textContent();
    expect(text).toContain("(no key)");
    expect(text).toContain("401");
    expect(text).toContain("auth_error");
    await shot("request-log-05-admin-1280");
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    await shot("request-log-06-admin-375");
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});
