// The Catalog models page in a real browser (harness as in dashboard.test.ts): a gateway with
// catalog.source: database; an administrator opens it from the Catalog page, searches, filters by
// provider, kind, tier and a price range, sorts by price, previews a CSV price import with a bad row
// (every problem listed, nothing can be applied), corrects it, previews old -> new and applies it as
// one new version. A gateway whose catalog is its file shows the page read-only, without the import.
// Shot at 1280 and 375 px into test-output/screenshots/ (catalog-models-*.png); at 375 px nothing
// scrolls sideways.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { parseUsd } from "../../src/core/money.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";

describe.skipIf(SKIP_BROWSER)("the Catalog models page in Chromium", () => {
  let gateway: TestGateway;
  let fileGateway: TestGateway;
  let page: Page;
  let browser: Browser | undefined;
  const email = "models-admin@example.com";

  beforeAll(async () => {
    gateway = await startGateway(mockConfig({ openaiUrl: "http://127.0.0.1:9", extra: "catalog: { source: database }" }));
    fileGateway = await startGateway(mockConfig({ openaiUrl: "http://127.0.0.1:9" }));
    const hash = await hashPassword(BROWSER_PASSWORD);
    for (const g of [gateway, fileGateway]) await g.app.ctx.store.accounts.create({ email, tier: "standard", balance: parseUsd("20")!, passwordHash: hash, isAdmin: true });
    browser = await openBrowser();
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await fileGateway?.close();
  });

  async function shotBoth(name: string) {
    await page.screenshot({ path: join(SHOTS, `catalog-models-${name}-1280.png`), fullPage: true });
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
      await page.screenshot({ path: join(SHOTS, `catalog-models-${name}-375.png`), fullPage: true });
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  }

  async function signIn(url: string) {
    await page.goto(`${url}/dashboard`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(BROWSER_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Catalog", exact: true }).click();
    await page.getByRole("heading", { name: "Catalog", level: 1 }).waitFor();
    await page.getByRole("link", { name: /Search, filter and sort the models/ }).click();
    await page.getByRole("heading", { name: "Catalog models", level: 1 }).waitFor();
  }

  const ids = () => page.getByTestId("models-row").locator("th code").allTextContents();

  it("searches, filters and sorts every model of the catalog", async () => {
    await signIn(gateway.url);
    await expect.poll(ids).toEqual(["claude-mock", "gpt-mock", "premium-mock"]);
    await page.getByTestId("models-search").fill("gpt");
    await expect.poll(ids).toEqual(["gpt-mock"]);
    await page.getByTestId("models-search").fill("");
    await page.getByTestId("models-tier").selectOption("standard");
    await expect.poll(ids).toEqual(["claude-mock", "gpt-mock"]);
    await page.getByTestId("models-tier").selectOption("");
    await page.getByTestId("models-kind").selectOption("chat");
    await expect.poll(ids).toHaveLength(3);
    // A price range on the output price, exact: gpt-mock 2.00, claude-mock 15.00, premium-mock 30.
    await page.getByTestId("models-price-key").selectOption("output_per_mtok");
    await page.getByTestId("models-price-min").fill("2.000000001");
    await expect.poll(ids).toEqual(["claude-mock", "premium-mock"]);
    await page.getByTestId("models-price-max").fill("15");
    await expect.poll(ids).toEqual(["claude-mock"]);
    await page.getByTestId("models-price-min").fill("");
    await page.getByTestId("models-price-max").fill("");
    await page.getByTestId("sort-price").click();
    await expect.poll(ids).toEqual(["gpt-mock", "claude-mock", "premium-mock"]);
    await page.getByTestId("sort-price").click();
    await expect.poll(ids).toEqual(["premium-mock", "claude-mock", "gpt-mock"]);
    expect(await page.getByTestId("models-price").allTextContents()).toEqual(["30", "15.00", "2.00"]);
    await page.getByTestId("models-provider").selectOption("mockai");
    await expect.poll(async () => (await ids()).length).toBeGreaterThan(0);
    await page.getByTestId("models-provider").selectOption("");
    await shotBoth("table");
  });

  it("previews a price import with every problem, then applies a corrected one as one version", async () => {
    const content = page.getByTestId("price-import-content");
    await content.fill("model,input_per_mtok,output_per_mtok\ngpt-mock,1.50,abc\nno-such-model,1,1\n");
    await page.getByTestId("price-import-preview").click();
    const errors = page.getByTestId("price-import-errors");
    await expect.poll(() => errors.textContent()).toContain("2 problem(s)");
    expect(await errors.textContent()).toContain("no-such-model");
    expect(await errors.textContent()).toContain('"abc" is not a non-negative USD amount');
    expect(await page.getByTestId("price-import-apply").isDisabled()).toBe(true);
    await shotBoth("import-errors");

    await content.fill('model,input_per_mtok,output_per_mtok\ngpt-mock,1.50,2.00\n"claude-mock",,16\n');
    await page.getByTestId("price-import-preview").click();
    const changes = page.getByTestId("price-import-changes");
    await expect.poll(() => changes.getByRole("row").count()).toBe(3);
    const rows = await changes.locator("tbody tr").allTextContents();
    expect(rows).toEqual(["gpt-mockinput_per_mtok1.001.50", "claude-mockoutput_per_mtok15.0016"]);
    expect((await gateway.app.ctx.store.catalog.latest())!.version).toBe(1);
    await shotBoth("import-preview");

    await page.getByRole("button", { name: "Apply 2 change(s) as a new version" }).click();
    await page.getByRole("status").filter({ hasText: "as catalog version 2" }).waitFor();
    expect((await gateway.app.ctx.store.catalog.latest())!.version).toBe(2);
    expect(gateway.app.ctx.config.models.get("claude-mock")!.pricing.outputPerMtok).toBe(16_000_000_000n);
    await page.getByTestId("models-price-key").selectOption("input_per_mtok");
    await page.getByTestId("models-search").fill("gpt-mock");
    await expect.poll(() => page.getByTestId("models-price").allTextContents()).toEqual(["1.50"]);
  });

  it("is read-only, and says so, when the catalog is the config file", async () => {
    await page.context().clearCookies();
    await signIn(fileGateway.url);
    await page.getByTestId("models-read-only").waitFor();
    expect(await page.getByTestId("models-read-only").textContent()).toContain("catalog.source is file");
    await expect.poll(ids).toHaveLength(3);
    expect(await page.getByTestId("price-import").count()).toBe(0);
    await shotBoth("read-only");
  });
});
