// The dashboard's rough edges (issue 40, item 7) in Chromium, harness as in dashboard.test.ts: the
// balance and where credit comes from on the landing page; the key editor as a dialog with a model
// multi-select and a date picker, saving with the same PATCH; a request log row opening to its
// details (error type and message, route, the model asked for though it does not exist); every
// page's tables fitting at 1280 px; the navigation folding into a Menu at 375 px; an invite link
// wrapping; the page title following the page; badge contrast of at least 4.5:1, measured with
// getComputedStyle (and the measurement failing a low-contrast badge). Screenshots at 1280 and
// 375 px go to test-output/screenshots/ (edges-*.png).
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { parseUsd } from "../../src/core/money.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

/** In the page: every badge's text colour against its background, as WCAG's contrast ratio ("class: ratio"). */
const BADGE_CONTRASTS = `(() => {
  const channel = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); };
  const rgb = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
  const luminance = ([r, g, b]) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  /** The first opaque background at or above the element (badges set their own). */
  const background = (el) => {
    for (let at = el; at; at = at.parentElement) {
      const [r, g, b, a = 1] = rgb(getComputedStyle(at).backgroundColor);
      if (a > 0) return [r, g, b];
    }
    return [255, 255, 255];
  };
  return [...document.querySelectorAll(".badge")].map((el) => {
    const fg = luminance(rgb(getComputedStyle(el).color));
    const bg = luminance(background(el));
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    return { name: el.className + " " + (el.textContent || "").trim(), ratio: Math.round(ratio * 100) / 100 };
  });
})()`;

describe.skipIf(SKIP_BROWSER)("the dashboard's rough edges, in Chromium", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let page: Page;
  let browser: Browser | undefined;
  const emails = { admin: "edges-admin@example.com", user: "edges-user@example.com" };
  let userKeyRaw = "";

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("hello", { usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } }));
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }));
    const store = gateway.app.ctx.store;
    const hash = await hashPassword(BROWSER_PASSWORD);
    await store.accounts.create({ email: emails.admin, tier: "standard", balance: parseUsd("20")!, passwordHash: hash, isAdmin: true });
    const user = await store.accounts.create({ email: emails.user, tier: "standard", balance: parseUsd("7.5")!, passwordHash: hash });
    userKeyRaw = (await store.keys.create({ accountId: user.id, name: "edge key", budgetCap: null, tokenCap: null })).raw;
    browser = await openBrowser();
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
  });

  async function signIn(email: string) {
    await page.goto(`${gateway.url}/dashboard`);
    // The page first asks for the session: wait until it shows either state, then sign out if needed.
    await page
      .getByRole("button", { name: /^Sign (in|out)$/ })
      .first()
      .waitFor();
    if (await page.getByRole("button", { name: "Sign out" }).count()) {
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("button", { name: "Sign in" }).waitFor();
    }
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(BROWSER_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
  }

  /** Nothing scrolls sideways: not the page, and (at 1280 px) no table inside its scrolling region. */
  const overflow = (width: number, tablesToo: boolean) =>
    page.evaluate<string>(`(() => {
      const problems = [];
      if (document.documentElement.scrollWidth > ${width}) problems.push("page " + document.documentElement.scrollWidth + " " + [...document.querySelectorAll("body *")].filter((el) => el.getBoundingClientRect().right > ${width} + 1 && !el.parentElement?.closest(".table-scroll")).slice(-4).map((el) => el.tagName.toLowerCase() + "." + el.className + "(" + Math.round(el.getBoundingClientRect().right) + ")").join(", "));
      if (${tablesToo}) for (const region of document.querySelectorAll(".table-scroll, table")) {
        if (region.scrollWidth > region.clientWidth + 1) problems.push((region.getAttribute("aria-label") || region.querySelector("caption")?.textContent || region.tagName) + " " + region.scrollWidth + ">" + region.clientWidth);
      }
      return problems.length ? problems.join("; ") : "fits";
    })()`);

  async function shotBoth(name: string) {
    await expect.poll(() => overflow(1280, true), { message: `${name} at 1280 px` }).toBe("fits");
    await page.screenshot({ path: join(SHOTS, `edges-${name}-1280.png`), fullPage: true });
    await page.setViewportSize({ width: 375, height: 800 });
    try {
      await expect.poll(() => overflow(375, false), { message: `${name} at 375 px` }).toBe("fits");
      await page.screenshot({ path: join(SHOTS, `edges-${name}-375.png`), fullPage: true });
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  }

  it("shows the balance and where credit comes from on the landing page, and the title follows the page", async () => {
    await page.goto(`${gateway.url}/dashboard`);
    await expect.poll(() => page.title()).toBe("Sign in · Model Gateway");
    await signIn(emails.user);
    await expect.poll(() => page.getByTestId("landing-balance").textContent()).toBe("$7.5000");
    const credit = page.getByTestId("get-credit");
    expect(await credit.textContent()).toContain("ask your gateway's administrator");
    expect(await page.title()).toBe("Keys · Model Gateway");
    await shotBoth("landing");
    expect(await credit.textContent()).toContain("redeem a top-up code on the Usage page");
    await credit.getByRole("link", { name: "redeem a top-up code" }).click();
    await page.getByLabel("Top-up code").waitFor();
    await expect.poll(() => page.title()).toBe("Usage · Model Gateway");
    for (const [link, title] of [
      ["Requests", "Requests · Model Gateway"],
      ["Models", "Models · Model Gateway"],
      ["Workspaces", "Workspaces · Model Gateway"],
    ] as const) {
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: link, exact: true }).click();
      await expect.poll(() => page.title()).toBe(title);
    }
    await page.getByRole("link", { name: emails.user }).click();
    await expect.poll(() => page.title()).toBe("Your account · Model Gateway");
  });

  it("edits a key in a dialog: models ticked from the tier's, an expiry from the date picker, the same PATCH", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Keys" }).click();
    await page.getByRole("button", { name: "Edit caps of edge key" }).click();
    const editor = page.getByRole("dialog", { name: "Edit key edge key" });
    await editor.waitFor();
    await editor.getByLabel("Only the models ticked").check();
    const models = editor.getByRole("group", { name: "Allowed models" });
    // The tier's models (standard: gpt-mock and claude-mock), not premium-mock.
    await expect.poll(() => models.getByRole("checkbox").count()).toBe(2);
    expect(await models.textContent()).not.toContain("premium-mock");
    await models.getByLabel(/gpt-mock/).check();
    const expires = editor.getByLabel("Expires");
    expect(await expires.getAttribute("type")).toBe("datetime-local");
    await expires.fill("2031-03-04T05:06");
    await editor.getByLabel("Budget cap (USD)").fill("3");
    await shotBoth("key-editor");
    await editor.getByRole("button", { name: "Save caps" }).click();
    await editor.waitFor({ state: "detached" });
    await page.getByRole("status").filter({ hasText: "Caps, policy and limits of edge key saved." }).waitFor();
    const account = (await gateway.app.ctx.store.accounts.getByEmail(emails.user))!;
    const key = (await gateway.app.ctx.store.keys.listByAccount(account.id)).find((k) => k.name === "edge key")!;
    expect(key.allowedModels).toEqual(["gpt-mock"]);
    // The picker's local time, as the browser's clock reads it, is the stored instant.
    const picked = await page.evaluate<number>('new Date("2031-03-04T05:06").getTime()');
    expect(key.expiresAt).toBe(picked);
    const row = page.locator("tr", { hasText: "edge key" });
    await expect.poll(() => row.textContent()).toContain("models: gpt-mock");
    expect(await row.textContent()).toContain("$3.0000");

    // Reopened: the saved choices; "Every model" and "Never expires" clear them again.
    await page.getByRole("button", { name: "Edit caps of edge key" }).click();
    expect(await models.getByLabel(/gpt-mock/).isChecked()).toBe(true);
    expect(await expires.inputValue()).toBe("2031-03-04T05:06");
    await editor.getByLabel("Every model of your tier").check();
    await editor.getByRole("button", { name: "Never expires" }).click();
    await editor.getByRole("button", { name: "Save caps" }).click();
    await editor.waitFor({ state: "detached" });
    await expect.poll(async () => (await gateway.app.ctx.store.keys.listByAccount(account.id)).find((k) => k.name === "edge key")!.allowedModels).toBeNull();
    expect((await gateway.app.ctx.store.keys.listByAccount(account.id)).find((k) => k.name === "edge key")!.expiresAt).toBeNull();
  });

  it("opens a request to its details: the error's type and message, the route and the model asked for", async () => {
    const refused = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${userKeyRaw}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mokc", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(refused.status).toBe(404);
    const requestId = refused.headers.get("x-request-id")!;
    await gateway.app.ctx.pipeline.requestLog!.flush();
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Requests" }).click();
    const table = page.getByRole("table", { name: "Requests, newest first" });
    await expect.poll(() => table.getByRole("row").count()).toBe(2);
    await table.getByRole("button", { name: `${requestId} details` }).click();
    const details = page.getByRole("dialog", { name: "Request refused: 404" });
    await details.waitFor();
    const text = (await details.textContent())!;
    expect(text).toContain("gpt-mokc");
    expect(text).toContain("POST /v1/chat/completions");
    expect(text).toContain("not_found");
    expect(text).toContain("The model gpt-mokc does not exist.");
    expect(text).toContain("Did you mean gpt-mock?");
    expect(text).toContain("none: no model of that name was served");
    await shotBoth("request-details");
    await page.keyboard.press("Escape");
    await details.waitFor({ state: "detached" });
  });

  it("fits every page's tables at 1280 px and folds the navigation into a menu at 375 px", { timeout: 120_000 }, async () => {
    await signIn(emails.admin);
    // Some traffic, so the tables have rows.
    for (let i = 0; i < 3; i++)
      await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${userKeyRaw}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "hi" }] }),
      });
    await gateway.app.ctx.pipeline.requestLog!.flush();
    for (const [path, heading] of [
      ["", "API keys"],
      ["/usage", "Usage"],
      ["/requests", "Requests"],
      ["/admin", "Accounts"],
      ["/admin/codes", "Redemption codes"],
      ["/admin/usage", "Usage across all accounts"],
      ["/admin/upstreams", "Upstream health"],
    ] as const) {
      await page.goto(`${gateway.url}/dashboard${path}`);
      await page.getByRole("heading", { level: 1 }).first().waitFor();
      expect(await page.getByRole("heading", { level: 1 }).first().textContent(), path).toContain(heading);
      await page.waitForLoadState("networkidle");
      await expect.poll(() => overflow(1280, true), { message: `${path || "/"} at 1280 px` }).toBe("fits");
    }

    await page.goto(`${gateway.url}/dashboard/requests`);
    await page.getByLabel("All accounts (administrator)").check();
    await expect.poll(() => overflow(1280, true)).toBe("fits");

    // A phone: the links hide behind Menu, which opens and closes them; a page change closes it.
    await page.setViewportSize({ width: 375, height: 800 });
    try {
      const nav = page.getByRole("navigation", { name: "Main" });
      const menu = page.getByRole("button", { name: "Menu" });
      expect(await nav.isVisible()).toBe(false);
      expect(await menu.getAttribute("aria-expanded")).toBe("false");
      await page.screenshot({ path: join(SHOTS, "edges-menu-closed-375.png"), fullPage: true });
      await menu.click();
      expect(await menu.getAttribute("aria-expanded")).toBe("true");
      await nav.getByRole("link", { name: "Accounts" }).waitFor();
      expect(await overflow(375, false)).toBe("fits");
      await page.screenshot({ path: join(SHOTS, "edges-menu-open-375.png"), fullPage: true });
      await nav.getByRole("link", { name: "Usage" }).click();
      await page.getByRole("heading", { name: "Usage", level: 1 }).waitFor();
      expect(await nav.isVisible()).toBe(false);
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
    expect(await page.getByRole("button", { name: "Menu" }).isVisible()).toBe(false);
    expect(await page.getByRole("navigation", { name: "Main" }).isVisible()).toBe(true);
  });

  it("wraps an invite link on a phone", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Workspaces" }).click();
    await page.getByLabel("Workspace name").fill("Edges team");
    await page.getByRole("button", { name: "Create workspace" }).click();
    await page.getByRole("heading", { name: "Edges team" }).waitFor();
    await page.getByRole("button", { name: "Create invite link" }).click();
    const link = page.getByTestId("invite-link");
    expect((await link.textContent())!.length).toBeGreaterThan(60);
    await page.setViewportSize({ width: 375, height: 800 });
    try {
      await expect.poll(() => overflow(375, false)).toBe("fits");
      const box = (await link.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(375);
      // Wrapped: more than one line high.
      expect(box.height).toBeGreaterThan(30);
      await page.screenshot({ path: join(SHOTS, "edges-invite-375.png"), fullPage: true });
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it("gives every badge a contrast of at least 4.5:1, and the measurement fails a pale one", async () => {
    const seen = new Map<string, number>();
    for (const path of ["", "/requests", "/admin", "/admin/codes", "/admin/upstreams"]) {
      await page.goto(`${gateway.url}/dashboard${path}`);
      await page.getByRole("heading", { level: 1 }).first().waitFor();
      await page.waitForLoadState("networkidle");
      for (const badge of await page.evaluate<Array<{ name: string; ratio: number }>>(BADGE_CONTRASTS)) seen.set(badge.name, badge.ratio);
    }
    // Every state the pages showed, with the key badges among them.
    expect([...seen.keys()].some((name) => name.startsWith("badge breaker-closed"))).toBe(true);
    const low = [...seen].filter(([, ratio]) => ratio < 4.5);
    expect(low, JSON.stringify(low)).toEqual([]);

    // Every badge class the stylesheet defines, shown once, measured the same way.
    const classes = await page.evaluate<string[]>(
      `[...new Set([...document.styleSheets].flatMap((sheet) => [...sheet.cssRules]).flatMap((rule) => (rule.selectorText || "").split(",")).map((s) => s.trim()).filter((s) => /^\\.badge\\.[\\w-]+$/.test(s)).map((s) => s.slice(7)))]`,
    );
    expect(classes.length).toBeGreaterThan(8);
    await page.evaluate(`(() => {
      const box = document.createElement("div");
      box.id = "badge-sample";
      for (const name of ${JSON.stringify(classes)}) { const b = document.createElement("span"); b.className = "badge " + name; b.textContent = name; box.appendChild(b); }
      document.querySelector("main").appendChild(box);
    })()`);
    const all = await page.evaluate<Array<{ name: string; ratio: number }>>(BADGE_CONTRASTS);
    const pale = all.filter((badge) => badge.ratio < 4.5);
    expect(pale, JSON.stringify(pale)).toEqual([]);

    // The check itself: a badge in a pale grey on white is reported.
    await page.evaluate(
      `(() => { const b = document.createElement("span"); b.className = "badge pale-sample"; b.style.color = "#9aa5b1"; b.style.background = "#ffffff"; b.textContent = "pale"; document.querySelector("main").appendChild(b); })()`,
    );
    const measured = await page.evaluate<Array<{ name: string; ratio: number }>>(BADGE_CONTRASTS);
    const sample = measured.find((badge) => badge.name.startsWith("badge pale-sample"))!;
    expect(sample.ratio).toBeLessThan(4.5);
  });
});
