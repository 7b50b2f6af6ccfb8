// People who sign in, in a real browser: playwright-core driving Debian's Chromium against a real
// gateway (harness as in dashboard.test.ts), sign-up closed as it is by default once providers are
// configured. Every page is shot at 1280 and 375 px wide into test-output/screenshots/ (people-*.png)
// and must not scroll sideways at 375 px. Covered: the sign-in page offers no sign-up and says how to
// get in; an administrator adds a person and gets the set-password link once; the person opens it,
// sets a password (typed twice) and is signed in, the link gone from the address bar; the used link
// is refused; the person changes their password on their account page (a wrong current one refused);
// an administrator issues a reset link from the account's page; keyboard use throughout.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { parseUsd } from "../../src/core/money.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";

describe.skipIf(SKIP_BROWSER)("people who sign in, in Chromium", () => {
  let gateway: TestGateway;
  let page: Page;
  let browser: Browser | undefined;
  const admin = "admin@example.com";
  const person = "new.person@example.com";
  const personPassword = "the person's first password";
  const changedPassword = "the person's second password";
  let link = "";

  beforeAll(async () => {
    gateway = await startGateway(mockConfig({ openaiUrl: "http://127.0.0.1:9" }));
    await gateway.app.ctx.store.accounts.create({ email: admin, tier: "standard", balance: parseUsd("5")!, passwordHash: await hashPassword(BROWSER_PASSWORD), isAdmin: true });
    browser = await openBrowser();
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  /** Screenshots at 1280 and 375 px; at 375 the page must not scroll sideways. */
  async function shotBoth(name: string) {
    await page.screenshot({ path: join(SHOTS, `people-${name}-1280.png`), fullPage: true });
    await page.setViewportSize({ width: 375, height: 800 });
    try {
      // Runs in the page (a string: the test's TypeScript has no DOM types). Names the innermost
      // offenders (wider than the page, or with text wider than themselves) outside a
      // sideways-scrolling region, to say what to fix.
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
      await page.screenshot({ path: join(SHOTS, `people-${name}-375.png`), fullPage: true });
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  }

  async function signOutIfSignedIn() {
    await page.getByRole("button", { name: /^Sign (in|out)$/ }).waitFor();
    if (await page.getByRole("button", { name: "Sign out" }).count()) {
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("button", { name: "Sign in" }).waitFor();
    }
  }

  async function signIn(email: string, password: string) {
    await page.goto(`${gateway.url}/dashboard`);
    await signOutIfSignedIn();
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
  }

  it("the sign-in page offers no sign-up while it is closed, and says how to get in", async () => {
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    await expect.poll(() => page.getByText("An administrator of this gateway can send you a set-password link").count()).toBe(1);
    expect(await page.getByRole("button", { name: "Create one" }).count()).toBe(0);
    await shotBoth("sign-in-closed");
  });

  it("an administrator adds a person and gets the set-password link once", async () => {
    await signIn(admin, BROWSER_PASSWORD);
    await page.getByRole("link", { name: "Accounts" }).click();
    await page.getByRole("heading", { name: "Add a person" }).waitFor();
    // With the keyboard: the email, then Tab past the administrator box to the button.
    await page.getByLabel("Email of the new person").focus();
    await page.keyboard.type(person);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(`document.activeElement?.type`)).toBe("checkbox");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    const shown = page.getByTestId("password-link");
    await shown.waitFor();
    link = (await shown.textContent())!.trim();
    expect(link).toMatch(new RegExp(`^${gateway.url}/dashboard/set-password#[A-Za-z0-9_-]{43}$`));
    expect(await page.getByRole("region", { name: `Set-password link for ${person}` }).textContent()).toContain("only time it is shown");
    const row = page.getByRole("table", { name: /^\d+ accounts$/ }).getByRole("row", { name: new RegExp(person.replace(".", "\\.")) });
    await expect.poll(() => row.textContent()).toContain("no password yet");
    await shotBoth("person-added");
    await page.getByRole("button", { name: "I have sent it; hide the link" }).click();
    await expect.poll(() => page.getByTestId("password-link").count()).toBe(0);
    expect(await page.content()).not.toContain(link.split("#")[1]!);
    // The audit log names the change, never the link.
    const audit = page.getByRole("table", { name: /latest 100 administrative changes/ });
    await expect.poll(() => audit.textContent()).toContain("account.password_link");
  });

  it("the person opens the link, sets a password and is signed in; the link is then refused", async () => {
    await page.goto(`${gateway.url}/dashboard`);
    await signOutIfSignedIn();
    await page.goto(link);
    await page.getByRole("heading", { name: "Set your password" }).waitFor();
    expect(await page.getByRole("form", { name: "Set your password" }).textContent()).toContain(person);
    await shotBoth("set-password");
    // Two different passwords: said so, nothing sent.
    await page.getByLabel("New password", { exact: true }).fill(personPassword);
    await page.getByLabel("New password again").fill("something else entirely");
    await page.getByRole("button", { name: "Set password and sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("differ");
    await page.getByLabel("New password again").fill(personPassword);
    await page.getByRole("button", { name: "Set password and sign in" }).click();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
    await expect.poll(() => page.getByRole("link", { name: person }).count()).toBe(1);
    // The used link left the address bar.
    expect(page.url()).toBe(`${gateway.url}/dashboard`);
    expect((await gateway.app.ctx.store.accounts.getByEmail(person))!.hasPassword).toBe(true);
    await shotBoth("signed-in-by-link");

    await page.goto(link);
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("password_link_invalid");
    expect(await page.getByRole("form").count()).toBe(0);
    await shotBoth("link-used");
  });

  it("the person changes their password on their account page", async () => {
    await signIn(person, personPassword);
    await page.getByRole("link", { name: person }).click();
    await page.getByRole("heading", { name: "Your account" }).waitFor();
    await page.getByLabel("Current password").fill("not my password");
    await page.getByLabel("New password", { exact: true }).fill(changedPassword);
    await page.getByLabel("New password again").fill(changedPassword);
    await page.getByRole("button", { name: "Change password" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("not your current password");
    await shotBoth("change-password-refused");
    await page.getByLabel("Current password").fill(personPassword);
    await page.getByRole("button", { name: "Change password" }).click();
    await page.getByRole("status").filter({ hasText: "Password changed" }).waitFor();
    // Still signed in with the fresh session: a write works.
    await page.getByRole("link", { name: "Workspaces" }).click();
    await page.getByLabel("Name").fill("After the change");
    await page.getByRole("button", { name: /^Create/ }).click();
    // Creating a workspace opens it.
    await page.getByRole("heading", { name: "After the change" }).waitFor();
    await page.getByRole("link", { name: person }).click();
    await page.getByRole("heading", { name: "Your account" }).waitFor();
    await shotBoth("account");
    await signIn(person, changedPassword);
  });

  it("an administrator issues a reset link from the account's page", async () => {
    await signIn(admin, BROWSER_PASSWORD);
    await page.getByRole("link", { name: "Accounts" }).click();
    await page.getByRole("link", { name: person }).click();
    await page.getByRole("heading", { name: person }).waitFor();
    await expect.poll(() => page.getByTestId("admin-sign-in").textContent()).toBe("password set");
    await page.getByRole("button", { name: "Issue a password reset link" }).click();
    const shown = page.getByTestId("password-link");
    await shown.waitFor();
    expect(await page.getByRole("region", { name: `Set-password link for ${person}` }).textContent()).toContain("the current one works until then");
    await shotBoth("reset-link");
    const reset = (await shown.textContent())!.trim();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.goto(reset);
    await page.getByRole("heading", { name: "Choose a new password" }).waitFor();
    await page.getByLabel("New password", { exact: true }).fill("the person's third password");
    await page.getByLabel("New password again").fill("the person's third password");
    await page.keyboard.press("Enter");
    await page.getByRole("button", { name: "Sign out" }).waitFor();
    await signIn(person, "the person's third password");
  });
});
