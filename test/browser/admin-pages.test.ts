// The administration pages and redemption in a real browser: playwright-core driving Debian's
// Chromium against a real gateway (harness as in dashboard.test.ts). Every page is shot at 1280 and
// 375 px wide into test-output/screenshots/ (admin-*.png) and must not scroll sideways at 375 px.
// Covered: an administrator mints codes and revokes one; a user redeems a code and sees the balance
// and the ledger row; an administrator credits an account with a reason and sees it in the ledger
// and audit log, sets and clears its limits, adds and removes a provider key; usage across accounts;
// the Catalog page read-only (catalog.source: file); keyboard use with visible focus; a
// non-administrator reaches neither the pages nor their API (403).
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { parseUsd } from "../../src/core/money.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

describe.skipIf(SKIP_BROWSER)("administration pages in Chromium", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let page: Page;
  let browser: Browser | undefined;
  const emails = { admin: "admin@example.com", user: "user@example.com" };
  let mintedCode = "";

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("hello", { usage: { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500 } }));
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }));
    const store = gateway.app.ctx.store;
    const hash = await hashPassword(BROWSER_PASSWORD);
    await store.accounts.create({ email: emails.admin, tier: "standard", balance: parseUsd("20")!, passwordHash: hash, isAdmin: true });
    await store.accounts.create({ email: emails.user, tier: "standard", balance: parseUsd("5")!, passwordHash: hash });
    browser = await openBrowser();
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
  });

  /** Screenshots at 1280 and 375 px; at 375 the page must not scroll sideways. */
  async function shotBoth(name: string) {
    await page.screenshot({ path: join(SHOTS, `admin-${name}-1280.png`), fullPage: true });
    await page.setViewportSize({ width: 375, height: 800 });
    try {
      // Runs in the page (a string: the test's TypeScript has no DOM types). Names the widest
      // offenders outside a sideways-scrolling region, to say what to fix.
      const wide = () =>
        page.evaluate<string>(`(() => {
          const width = document.documentElement.scrollWidth;
          if (width <= 375) return "fits";
          const offenders = [...document.querySelectorAll("body *")]
            .filter((el) => el.getBoundingClientRect().right > 376 && !el.parentElement?.closest(".table-scroll"))
            .slice(0, 5)
            .map((el) => el.tagName.toLowerCase() + "." + el.className + "(" + Math.round(el.getBoundingClientRect().right) + ")");
          return width + ": " + offenders.join(", ");
        })()`);
      await expect.poll(wide, { message: `${name} is wider than 375 px` }).toBe("fits");
      await page.screenshot({ path: join(SHOTS, `admin-${name}-375.png`), fullPage: true });
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  }

  async function signIn(email: string) {
    await page.goto(`${gateway.url}/dashboard`);
    // Signed in already (as someone): sign out first.
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

  /** The dashboard API as the signed-in page calls it (its cookie and CSRF token). */
  async function apiStatus(method: string, path: string, body?: unknown): Promise<number> {
    return page.evaluate(
      async ({ method, path, body }) => {
        const session = (await (await fetch("/dashboard/api/session")).json()) as { csrf_token: string };
        const response = await fetch(`/dashboard/api${path}`, {
          method,
          headers: { "content-type": "application/json", "x-csrf-token": session.csrf_token },
          ...(body !== undefined && { body: JSON.stringify(body) }),
        });
        return response.status;
      },
      { method, path, body },
    );
  }

  it("an administrator mints codes (shown once) and revokes an unused one", async () => {
    await signIn(emails.admin);
    await page.getByRole("link", { name: "Codes" }).click();
    await page.getByRole("heading", { name: "Redemption codes" }).waitFor();
    await page.getByLabel("Value (USD)").fill("12.50");
    await page.getByLabel("How many").fill("2");
    await page.getByLabel("Batch (optional)").fill("launch");
    await page.getByLabel("Note (optional)").fill("browser test");
    await page.getByRole("button", { name: "Mint codes" }).click();
    const codes = (await page.getByTestId("minted-codes").textContent())!.trim().split("\n");
    expect(codes).toHaveLength(2);
    for (const code of codes) expect(code).toMatch(/^MGW(-[0-9A-Z]{5}){5}$/);
    mintedCode = codes[0]!;
    const table = page.getByRole("table", { name: /^Codes, newest first/ });
    await expect.poll(() => table.getByRole("row").filter({ hasText: "launch" }).count()).toBe(2);
    expect(await table.textContent()).toContain("$12.5000");
    await shotBoth("codes-minted");
    await page.getByRole("button", { name: "I have stored them; hide the codes" }).click();
    await expect.poll(() => page.getByTestId("minted-codes").count()).toBe(0);
    expect(await page.content()).not.toContain(codes[1]!.slice(10));

    // Revoke the second code: its row (named by its prefix) says revoked.
    const prefix = `${codes[1]!.slice(0, 9)}-…`;
    await page.getByRole("button", { name: `Revoke ${prefix}` }).click();
    await page.getByRole("button", { name: `Yes, revoke ${prefix}` }).click();
    await page.getByRole("status").filter({ hasText: "revoked" }).waitFor();
    await expect.poll(() => table.getByRole("row", { name: new RegExp(prefix.replace("…", "")) }).textContent()).toContain("revoked");
    await shotBoth("codes-revoked");
  });

  it("a user redeems a code on the usage page and sees the balance and the ledger row", async () => {
    await signIn(emails.user);
    await page.getByRole("link", { name: "Usage" }).click();
    await expect.poll(() => page.getByTestId("balance").textContent()).toBe("$5.0000");
    // Typed the way a person might: lower case with spaces.
    await page.getByLabel("Top-up code").fill(mintedCode.toLowerCase().replace(/-/g, " "));
    await page.getByRole("button", { name: "Redeem" }).click();
    await page.getByRole("status").filter({ hasText: "$12.5000 added" }).waitFor();
    await expect.poll(() => page.getByTestId("balance").textContent()).toBe("$17.5000");
    const ledger = page.getByRole("table", { name: "Ledger rows, newest first" });
    await expect.poll(() => ledger.getByRole("row").nth(1).textContent()).toContain("redemption code");
    expect(await ledger.getByRole("row").nth(1).textContent()).toContain("12.50");
    await shotBoth("redeemed");
    // The same code again: the API's reason, as an alert.
    await page.getByLabel("Top-up code").fill(mintedCode);
    await page.getByRole("button", { name: "Redeem" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("code_not_redeemable");
    expect(await page.getByRole("alert").textContent()).toContain("redeemed already");
    await shotBoth("redeem-refused");
  });

  it("a non-administrator reaches neither the admin pages nor their API routes (403)", async () => {
    // Still signed in as the user.
    const nav = page.getByRole("navigation", { name: "Main" });
    expect(await nav.getByRole("link").allTextContents()).toEqual(["Keys", "Models", "Usage", "Requests", "Workspaces"]);
    for (const path of ["/admin", "/admin/codes", "/admin/usage", "/admin/upstreams", "/admin/accounts/acct_x"]) {
      await page.goto(`${gateway.url}/dashboard${path}`);
      await page.getByText("Nothing here.").waitFor();
    }
    await shotBoth("non-admin");
    const me = (await gateway.app.ctx.store.accounts.getByEmail(emails.user))!;
    const routes: Array<[string, string, unknown?]> = [
      ["GET", "/admin/accounts"],
      ["GET", `/admin/accounts/${me.id}`],
      ["PATCH", `/admin/accounts/${me.id}`, { tier: "premium" }],
      ["POST", `/admin/accounts/${me.id}/credits`, { amount_usd: "100", reason: "me" }],
      ["GET", `/admin/accounts/${me.id}/provider-keys`],
      ["GET", "/admin/usage"],
      ["GET", "/admin/audit"],
      ["GET", "/admin/upstreams"],
      ["GET", "/admin/codes"],
      ["POST", "/admin/codes", { value_usd: "100" }],
    ];
    for (const [method, path, body] of routes) expect(await apiStatus(method, path, body), `${method} ${path}`).toBe(403);
    expect((await gateway.app.ctx.store.accounts.get(me.id))!.balance).toBe(parseUsd("17.50"));
  });

  it("an administrator credits an account with a reason; it appears in the ledger and the audit log", async () => {
    await signIn(emails.admin);
    await page.getByRole("link", { name: "Accounts" }).click();
    await page.getByLabel("Email or account id").fill("user@");
    await page.getByRole("button", { name: "Search" }).click();
    await expect
      .poll(() =>
        page
          .getByRole("table", { name: /accounts matching/ })
          .getByRole("row")
          .count(),
      )
      .toBe(2);
    await shotBoth("accounts-search");
    await page.getByRole("link", { name: emails.user }).click();
    await page.getByRole("heading", { name: emails.user }).waitFor();
    await expect.poll(() => page.getByTestId("admin-balance").textContent()).toBe("$17.5000");

    await page.getByLabel("Amount (USD)").fill("2.5");
    // The reason is required: the button stays disabled without one.
    expect(await page.getByRole("button", { name: "Credit account" }).isDisabled()).toBe(true);
    await page.getByLabel("Reason (required; shown in the ledger)").fill("goodwill for outage 42");
    // Asked first, naming the account, the amount and the balance it leads to; Cancel books nothing.
    await page.getByRole("button", { name: "Credit account" }).click();
    const confirm = page.getByRole("alertdialog", { name: `Credit $2.5000 to ${emails.user}?` });
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain(emails.user);
    expect(await confirm.getByTestId("balance-after").textContent()).toBe("$20.0000");
    await shotBoth("account-credit-confirm");
    await confirm.getByRole("button", { name: "Cancel" }).click();
    expect(await confirm.count()).toBe(0);
    expect(await page.getByTestId("admin-balance").textContent()).toBe("$17.5000");
    await page.getByRole("button", { name: "Credit account" }).click();
    await confirm.getByRole("button", { name: "Yes, credit $2.5000" }).click();
    await page.getByRole("status").filter({ hasText: "Credited $2.5000" }).waitFor();
    await expect.poll(() => page.getByTestId("admin-balance").textContent()).toBe("$20.0000");
    const ledger = page.getByRole("table", { name: /latest 20 ledger rows/ });
    await expect.poll(() => ledger.getByRole("row").nth(1).textContent()).toContain("goodwill for outage 42");
    expect(await ledger.getByRole("row").nth(1).textContent()).toContain("credit");
    const audit = page.getByRole("table", { name: "Changes to this account, newest first" });
    await expect.poll(() => audit.textContent()).toContain("account.credit");
    await shotBoth("account-credited");

    // A debit with the keyboard only: radio, amount, reason, submit.
    await page.getByLabel("Debit (take)").focus();
    await page.keyboard.press("Space");
    await page.getByLabel("Amount (USD)").focus();
    await page.keyboard.type("1");
    await page.keyboard.press("Tab");
    await page.keyboard.type("correction");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    // The confirmation opens with Cancel focused; the action is one Shift+Tab before it.
    await page.getByRole("alertdialog", { name: `Debit $1.0000 from ${emails.user}?` }).waitFor();
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "Debited $1.0000" }).waitFor();
    await expect.poll(() => page.getByTestId("admin-balance").textContent()).toBe("$19.0000");
    // A debit past the balance is refused with the API's error; what was typed stays.
    await page.getByLabel("Amount (USD)").fill("500");
    await page.getByLabel("Reason (required; shown in the ledger)").fill("too much");
    await page.getByRole("button", { name: "Debit account" }).click();
    await page.getByRole("button", { name: "Yes, debit $500.0000" }).click();
    await expect.poll(() => page.getByRole("alert").first().textContent()).toContain("balance_invariant");
    expect(await page.getByLabel("Reason (required; shown in the ledger)").inputValue()).toBe("too much");
    expect(await page.getByTestId("admin-balance").textContent()).toBe("$19.0000");
    await shotBoth("account-debit-refused");
  });

  it("an administrator changes tier and budgets, sets and clears limits, adds and removes a provider key", async () => {
    // On the user's account page still.
    await page.getByRole("combobox", { name: "Tier" }).selectOption("premium");
    await page.getByLabel("Monthly budget (USD, empty for none)").fill("30");
    await page.getByRole("button", { name: "Save tier and budgets" }).click();
    await page.getByRole("status").filter({ hasText: "Tier and budgets saved" }).waitFor();
    const user = () => gateway.app.ctx.store.accounts.getByEmail(emails.user);
    await expect.poll(async () => (await user())!.tier).toBe("premium");
    expect((await user())!.monthlyBudget).toBe(parseUsd("30"));

    await page.getByLabel("Requests per minute").fill("60");
    await page.getByLabel(/^Per-model limits/).fill("gpt-mock concurrent=2");
    await page.getByRole("button", { name: "Save limits" }).click();
    await page.getByRole("status").filter({ hasText: "Limits saved" }).waitFor();
    await expect.poll(async () => (await user())!.limits?.requestsPerMinute ?? null).toBe(60);
    expect((await user())!.limits?.models.get("gpt-mock")?.concurrentRequests).toBe(2);
    await shotBoth("account-limits");
    // The accounts list shows them too.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Accounts" }).click();
    const row = page.getByRole("row", { name: new RegExp(emails.user) });
    await expect.poll(() => row.textContent()).toContain("60 rpm; 1 model");
    expect(await row.textContent()).toContain("$30.0000");
    await page.getByRole("link", { name: emails.user }).click();
    await page.getByRole("heading", { name: emails.user }).waitFor();
    await page.getByRole("button", { name: "Clear limits" }).click();
    await page.getByRole("status").filter({ hasText: "Limits cleared" }).waitFor();
    await expect.poll(async () => (await user())!.limits).toBeNull();

    const secret = "sk-browser-provider-key-9876";
    await page.getByLabel("Provider API key").fill(secret);
    await page.getByLabel("Label (optional)").fill("team key");
    await page.getByRole("button", { name: "Add provider key" }).click();
    await page.getByRole("status").filter({ hasText: "will not be shown again" }).waitFor();
    const keys = page.getByRole("table", { name: "Provider keys of this account" });
    await expect.poll(() => keys.textContent()).toContain("…9876");
    expect(await page.content()).not.toContain(secret);
    expect(await page.getByLabel("Provider API key").inputValue()).toBe("");
    await shotBoth("account-provider-key");
    await page.getByRole("button", { name: "Remove mockai key …9876" }).click();
    await page.getByRole("button", { name: "Yes, remove mockai key …9876" }).click();
    await expect.poll(() => keys.textContent()).toContain("No provider keys.");
  });

  it("shows usage across all accounts and the upstream health page", async () => {
    const { raw } = await gateway.createAccount({ email: "heavy@example.com", balance: "10" });
    const call = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(call.status).toBe(200);
    await page.getByRole("link", { name: "Reports" }).click();
    await page.getByRole("heading", { name: "Usage across all accounts" }).waitFor();
    await expect.poll(() => page.getByTestId("all-requests").textContent()).toBe("1");
    // 1200 input at 1.00/M and 300 output at 2.00/M.
    expect(await page.getByTestId("all-spend").textContent()).toBe("$0.0018");
    expect(await page.getByRole("table", { name: "By account" }).textContent()).toContain("heavy@example.com");
    expect(await page.getByRole("table", { name: "By model" }).textContent()).toContain("gpt-mock");
    expect(await page.getByRole("table", { name: "By provider" }).textContent()).toContain("mockai");
    expect(await page.getByRole("table", { name: "By account" }).textContent()).toContain("1,200");
    await shotBoth("reports");
    await page.getByRole("link", { name: "Upstreams" }).click();
    await page.getByRole("heading", { name: "Upstream health" }).waitFor();
    await shotBoth("upstreams");
    // This gateway's catalog comes from its file: the Catalog page reads it and offers no writes.
    await page.getByRole("link", { name: "Catalog", exact: true }).click();
    await page.getByRole("heading", { name: "Catalog", level: 1 }).waitFor();
    await expect.poll(() => page.getByTestId("catalog-source").textContent()).toContain("read-only");
    expect(await page.getByRole("note").textContent()).toContain("catalog.source: file: change gateway.config.yaml and reload");
    expect(await page.getByTestId("catalog-models").textContent()).toContain("gpt-mock");
    expect(await page.getByRole("button", { name: "Add provider key" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Roll back to this version" }).count()).toBe(0);
    await shotBoth("catalog-read-only");
  });

  it("is usable by keyboard with a visible focus ring", async () => {
    await page.getByRole("link", { name: "Codes" }).click();
    await page.getByRole("heading", { name: "Redemption codes" }).waitFor();
    // From the top of the page, Tab reaches the nav links and then the mint form's first input.
    await page.locator("body").focus();
    let reached = false;
    for (let i = 0; i < 15 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = (await page.getByLabel("Value (USD)").and(page.locator(":focus")).count()) === 1;
    }
    expect(reached).toBe(true);
    // The focused element's outline (the :focus-visible ring), read in the page.
    const outline = await page.evaluate<string>("getComputedStyle(document.activeElement).outlineStyle + ' ' + getComputedStyle(document.activeElement).outlineWidth");
    expect(outline).toMatch(/^solid [1-9]/);
    await page.keyboard.type("1");
    await page.keyboard.press("Enter");
    await page.getByTestId("minted-codes").waitFor();
    await shotBoth("keyboard-mint");
  });
});
