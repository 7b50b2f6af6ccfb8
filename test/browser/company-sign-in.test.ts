// Company sign-in in a real browser: Chromium (playwright-core) against a real gateway and a real
// OpenID provider (oidc-provider) on 127.0.0.1. The sign-in page shows "Sign in with Example SSO"
// next to the password form; the button goes through the provider and back, signed in; a refusal
// (an email outside the allowed domains) comes back to the sign-in page saying why. With password
// sign-in turned off only the button is left. Shots at 1280 and 375 px (company-sign-in-*.png).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { startOidcProvider, type TestOidcProvider } from "../support/oidc-provider.js";

const ACTOR = { type: "cli" as const, id: null, name: "test", clientAddress: null, requestId: null };

describe.skipIf(SKIP_BROWSER)("company sign-in, in Chromium", () => {
  let gateway: TestGateway;
  let idp: TestOidcProvider;
  let page: Page;
  let browser: Browser | undefined;

  function config(passwordSignIn: boolean): string {
    return `${mockConfig({ openaiUrl: "http://127.0.0.1:9" })}
oidc:
  issuer: "${idp.issuer}"
  client_id: ${idp.clientId}
  client_secret: ${idp.clientSecret}
  label: Example SSO
  allowed_email_domains: [example.com]
  password_sign_in: ${passwordSignIn}
`;
  }

  /** Writes the config with the provider (whose client needs the gateway's address) and reloads it. */
  async function useConfig(passwordSignIn: boolean) {
    writeFileSync(gateway.configPath, config(passwordSignIn));
    const outcome = await gateway.app.reloadConfig(ACTOR);
    expect(outcome.status, JSON.stringify(outcome)).toBe("reloaded");
  }

  beforeAll(async () => {
    gateway = await startGateway(mockConfig({ openaiUrl: "http://127.0.0.1:9" }));
    idp = await startOidcProvider([`${gateway.url}/dashboard/api/auth/oidc/callback`]);
    await useConfig(true);
    browser = await openBrowser();
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await idp?.close();
  });

  async function shotBoth(name: string) {
    await page.screenshot({ path: join(SHOTS, `company-sign-in-${name}-1280.png`), fullPage: true });
    await page.setViewportSize({ width: 375, height: 800 });
    try {
      await expect.poll(() => page.evaluate<number>("document.documentElement.scrollWidth"), { message: `${name} is wider than 375 px` }).toBeLessThanOrEqual(375);
      await page.screenshot({ path: join(SHOTS, `company-sign-in-${name}-375.png`), fullPage: true });
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  }

  it("signs a person in through the provider with the company button", async () => {
    idp.user = { sub: "grace-1", email: "grace@example.com", email_verified: true };
    await page.goto(`${gateway.url}/dashboard`);
    const button = page.getByRole("link", { name: "Sign in with Example SSO" });
    await button.waitFor();
    expect(await page.getByLabel("Password").count()).toBe(1);
    await shotBoth("page");
    await button.click();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/dashboard");
    await expect.poll(() => page.getByText("grace@example.com").count()).toBeGreaterThan(0);
    await shotBoth("signed-in");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("link", { name: "Sign in with Example SSO" }).waitFor();
  });

  it("comes back to the sign-in page saying why when the provider's person may not sign in", async () => {
    idp.user = { sub: "heidi-1", email: "heidi@elsewhere.org", email_verified: true };
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByRole("link", { name: "Sign in with Example SSO" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toContain("Your email domain may not sign in to this gateway. (oidc_email_domain)");
    expect(await page.getByRole("button", { name: "Sign out" }).count()).toBe(0);
    await shotBoth("refused");
  });

  it("shows only the company button when password sign-in is off", async () => {
    await useConfig(false);
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByRole("link", { name: "Sign in with Example SSO" }).waitFor();
    expect(await page.getByLabel("Password").count()).toBe(0);
    await shotBoth("company-only");
  });
});
