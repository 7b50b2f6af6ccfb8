// The Catalog page in a real browser (harness as in dashboard.test.ts): a gateway with
// catalog.source: database; an administrator sees the source, the version served and the models
// table, adds, disables and removes a shared provider key, sees a change made elsewhere appear in the
// version history, opens its diff, rolls back after confirming and sees the version count grow. Shot
// at 1280 and 375 px into test-output/screenshots/ (catalog-*.png); at 375 px nothing scrolls sideways.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { parseUsd } from "../../src/core/money.js";
import type { CatalogDocument } from "../../src/config/catalog-document.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";

describe.skipIf(SKIP_BROWSER)("the Catalog page in Chromium", () => {
  let gateway: TestGateway;
  let page: Page;
  let browser: Browser | undefined;
  const email = "catalog-admin@example.com";

  beforeAll(async () => {
    gateway = await startGateway(mockConfig({ openaiUrl: "http://127.0.0.1:9", extra: "catalog: { source: database }" }));
    const hash = await hashPassword(BROWSER_PASSWORD);
    await gateway.app.ctx.store.accounts.create({ email, tier: "standard", balance: parseUsd("20")!, passwordHash: hash, isAdmin: true });
    browser = await openBrowser();
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  /** Screenshots at 1280 and 375 px; at 375 the page must not scroll sideways. */
  async function shotBoth(name: string) {
    await page.screenshot({ path: join(SHOTS, `catalog-${name}-1280.png`), fullPage: true });
    await page.setViewportSize({ width: 375, height: 800 });
    try {
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
      await page.screenshot({ path: join(SHOTS, `catalog-${name}-375.png`), fullPage: true });
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  }

  it("shows the catalog and manages a shared provider key", async () => {
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(BROWSER_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Catalog", exact: true }).click();
    await page.getByRole("heading", { name: "Catalog", level: 1 }).waitFor();
    await expect.poll(() => page.getByTestId("catalog-source").textContent()).toContain("database");
    expect(await page.getByTestId("catalog-version").textContent()).toBe("1");
    const models = page.getByTestId("catalog-models");
    await expect.poll(() => models.getByRole("row").count()).toBeGreaterThan(1);
    expect(await models.textContent()).toContain("gpt-mock");
    expect(await models.textContent()).toContain("input_per_mtok");
    await expect.poll(() => page.getByTestId("catalog-version-count").textContent()).toBe("1");
    await shotBoth("read");

    // A shared key: the field hides what is typed; the table shows the last four characters only.
    const keyField = page.getByLabel("Provider API key");
    expect(await keyField.getAttribute("type")).toBe("password");
    await keyField.fill("sk-browser-catalog-key-4242");
    await page.getByLabel("Label (optional)").fill("browser");
    await page.getByRole("button", { name: "Add provider key" }).click();
    await page.getByRole("status").filter({ hasText: "will not be shown again" }).waitFor();
    const name = "mockai key …4242";
    await page.getByRole("button", { name: `Disable ${name}` }).click();
    await page.getByRole("button", { name: `Enable ${name}` }).waitFor();
    await page.getByRole("button", { name: `Remove ${name}` }).click();
    await page.getByRole("button", { name: `Yes, remove ${name}` }).click();
    await page
      .getByRole("status")
      .filter({ hasText: `Removed the ${name}` })
      .waitFor();
    // The status comes first; the table follows once the list is read again.
    await expect.poll(() => page.getByRole("button", { name: `Enable ${name}` }).count()).toBe(0);
    expect(await page.content()).not.toContain("sk-browser-catalog-key");
  });

  it("shows a change made elsewhere in the history and its diff, and rolls back after confirming", async () => {
    const { document } = await gateway.app.ctx.catalog.current();
    const changed: CatalogDocument = {
      ...document,
      models: document.models.map((m) => (m.id === "gpt-mock" ? { ...m, pricing: { input_per_mtok: "7.00", output_per_mtok: "9.00" } } : m)),
    };
    const actor = { type: "cli" as const, id: null, name: "browser-test", clientAddress: null, requestId: null };
    expect((await gateway.app.ctx.catalog.replace(actor, changed, 1, "price change")).version).toBe(2);

    await page.reload();
    await expect.poll(() => page.getByTestId("catalog-version").textContent()).toBe("2");
    await expect.poll(() => page.getByTestId("catalog-version-count").textContent()).toBe("2");
    const history = page.getByTestId("catalog-versions");
    expect(await history.textContent()).toContain("price change");

    await page.getByRole("button", { name: "Version 1", exact: true }).click();
    const diff = page.getByTestId("catalog-diff");
    await expect.poll(() => diff.textContent()).toContain("gpt-mock");
    expect(await diff.textContent()).toContain("changed");
    expect(await diff.textContent()).toContain("7.00");
    expect(await diff.textContent()).toContain("→");
    await shotBoth("diff");

    await page.getByRole("button", { name: "Roll back to this version" }).click();
    const dialog = page.getByRole("alertdialog");
    await dialog.waitFor();
    await shotBoth("confirm");
    await dialog.getByRole("button", { name: "Yes, roll back to version 1" }).click();
    await page.getByRole("status").filter({ hasText: "Rolled back to version 1" }).waitFor();
    await expect.poll(() => page.getByTestId("catalog-version-count").textContent()).toBe("3");
    expect(await page.getByTestId("catalog-version").textContent()).toBe("3");
    expect(await history.textContent()).toContain("rollback to 1");
    const served = await gateway.app.ctx.catalog.current();
    expect(served.document).toEqual(document);
  });
});
