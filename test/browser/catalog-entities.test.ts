// The Catalog page's entry dialogs in a real browser (issue 40, item 1): an administrator adds a
// provider and a model (kind, upstream name, context, modalities, prices, tiers) in dialogs, edits
// the model, sees a refused change explained in the dialog with nothing changed, disables and enables
// it, is told which tier still names it before deleting it, turns a model into a routing group and
// gives a tier a price factor under "Other settings" (JSON), and pages through older versions of the
// history. Every save is checked against the catalog the gateway serves. Shot at 1280 and 375 px into
// test-output/screenshots/ (catalog-entities-*.png); at 375 px nothing scrolls sideways.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { parseUsd } from "../../src/core/money.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";

describe.skipIf(SKIP_BROWSER)("the Catalog page's entry dialogs in Chromium", () => {
  let gateway: TestGateway;
  let page: Page;
  let browser: Browser | undefined;
  const email = "catalog-entities-admin@example.com";

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

  const served = async () => gateway.app.ctx.catalog.current();
  const model = async (id: string) => (await served()).document.models.find((m) => m.id === id);

  /** Screenshots at 1280 and 375 px; at 375 the page must not scroll sideways. */
  async function shotBoth(name: string) {
    await page.screenshot({ path: join(SHOTS, `catalog-entities-${name}-1280.png`), fullPage: true });
    await page.setViewportSize({ width: 375, height: 800 });
    try {
      await expect.poll(() => page.evaluate<number>("document.documentElement.scrollWidth"), { message: `${name} is wider than 375 px` }).toBeLessThanOrEqual(375);
      await page.screenshot({ path: join(SHOTS, `catalog-entities-${name}-375.png`), fullPage: true });
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  }

  async function status(text: string) {
    await page.getByRole("status").filter({ hasText: text }).waitFor();
  }

  it("adds a provider and a model with its prices, modalities and tiers in dialogs", async () => {
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(BROWSER_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Catalog", exact: true }).click();
    await page.getByRole("heading", { name: "Catalog", level: 1 }).waitFor();

    await page.getByRole("button", { name: "Add provider", exact: true }).click();
    const providerDialog = page.getByTestId("provider-dialog");
    await providerDialog.getByLabel("Name", { exact: true }).fill("browserai");
    await providerDialog.getByLabel("Type").selectOption("openai");
    await providerDialog.getByLabel("Base URL").fill("http://127.0.0.1:9/v1");
    await shotBoth("provider-dialog");
    await providerDialog.getByRole("button", { name: "Save" }).click();
    await status("Added provider browserai.");
    expect((await served()).document.providers.browserai).toMatchObject({ type: "openai", base_url: "http://127.0.0.1:9/v1" });

    await page.getByRole("button", { name: "Add model", exact: true }).click();
    const dialog = page.getByTestId("model-dialog");
    await dialog.getByLabel("Model id").fill("browser-model");
    await dialog.getByLabel("Kind").selectOption("chat");
    await dialog.getByLabel("Provider").selectOption("browserai");
    await dialog.getByLabel("Upstream model name").fill("up-1");
    await dialog.getByLabel("Context window (tokens)").fill("32000");
    await dialog.locator('input[name="input-text"]').check();
    await dialog.locator('input[name="input-image"]').check();
    await dialog.locator('input[name="output-text"]').check();
    await dialog.getByLabel("input_per_mtok", { exact: true }).fill("1.25");
    await dialog.getByLabel("output_per_mtok", { exact: true }).fill("2.50");
    await dialog.getByLabel("per_request", { exact: true }).fill("0.001");
    await dialog.locator('input[name="tier-standard"]').check();
    await shotBoth("model-dialog");
    const before = (await served()).version!.version;
    await dialog.getByRole("button", { name: "Save" }).click();
    await status("Added model browser-model.");
    const after = await served();
    // The model, then the tier that now lists it: two versions.
    expect(after.version!.version).toBe(before + 2);
    expect(await model("browser-model")).toEqual({
      id: "browser-model",
      kind: "chat",
      provider: "browserai",
      upstream_model: "up-1",
      context_window: 32000,
      modalities: { input: ["text", "image"], output: ["text"] },
      pricing: { input_per_mtok: "1.25", output_per_mtok: "2.50", per_request: "0.001" },
    });
    expect(after.document.tiers.standard!.models).toEqual(["gpt-mock", "claude-mock", "browser-model"]);
    await expect.poll(() => page.getByTestId("catalog-models").textContent()).toContain("browser-model");
    await shotBoth("added");
  });

  it("edits a model, shows a refused change in its dialog and changes nothing", async () => {
    await page.getByRole("button", { name: "Edit model browser-model" }).click();
    const dialog = page.getByTestId("model-dialog");
    expect(await dialog.getByLabel("input_per_mtok", { exact: true }).inputValue()).toBe("1.25");
    await dialog.getByLabel("input_per_mtok", { exact: true }).fill("3.00");
    await dialog.getByLabel("per_request", { exact: true }).fill("");
    await dialog.getByRole("button", { name: "Save" }).click();
    await status("Saved model browser-model.");
    expect((await model("browser-model"))!.pricing).toEqual({ input_per_mtok: "3.00", output_per_mtok: "2.50" });

    const version = (await served()).version!.version;
    await page.getByRole("button", { name: "Edit model browser-model" }).click();
    await dialog.getByLabel("output_per_mtok", { exact: true }).fill("abc");
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.getByRole("alert").filter({ hasText: "pricing.output_per_mtok" }).waitFor();
    await shotBoth("refused");
    expect((await served()).version!.version).toBe(version);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await expect.poll(() => dialog.count()).toBe(0);
  });

  it("disables and enables a model, and deletes it once no tier names it", async () => {
    await page.getByRole("button", { name: "Disable model browser-model" }).click();
    await status("Disabled model browser-model.");
    expect((await model("browser-model"))!.disabled).toBe(true);
    expect(gateway.app.ctx.live.current.config.models.has("browser-model")).toBe(false);
    await page.getByRole("button", { name: "Enable model browser-model" }).click();
    await status("Enabled model browser-model.");
    expect(gateway.app.ctx.live.current.config.models.has("browser-model")).toBe(true);

    await page.getByRole("button", { name: "Delete model browser-model" }).click();
    await page.getByRole("alertdialog", { name: "Delete model browser-model?" }).getByRole("button", { name: "Yes, delete" }).click();
    await page.getByRole("alert").filter({ hasText: "tiers.standard.models" }).waitFor();
    expect(await model("browser-model")).toBeDefined();

    await page.getByRole("button", { name: "Edit tier standard" }).click();
    await page.getByTestId("tier-dialog").getByLabel("browser-model").uncheck();
    await page.getByTestId("tier-dialog").getByRole("button", { name: "Save" }).click();
    await status("Saved tier standard.");
    await page.getByRole("button", { name: "Delete model browser-model" }).click();
    await page.getByRole("alertdialog", { name: "Delete model browser-model?" }).getByRole("button", { name: "Yes, delete" }).click();
    await status("Deleted model browser-model.");
    expect(await model("browser-model")).toBeUndefined();
  });

  it("makes a model a routing group and gives a tier a price factor under Other settings", async () => {
    const dialog = page.getByTestId("model-dialog");
    await page.getByRole("button", { name: "Edit model gpt-mock" }).click();
    const version = (await served()).version!.version;
    await dialog.getByLabel("Other settings (JSON)").fill("{ not json");
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.getByRole("alert").filter({ hasText: "Other settings: not valid JSON" }).waitFor();
    expect((await served()).version!.version).toBe(version);
    const group = {
      deployments: [
        { name: "primary", provider: "mockai" },
        { name: "backup", provider: "browserai", priority: 1 },
      ],
      routing: { strategy: "ordered" },
    };
    await dialog.getByLabel("Other settings (JSON)").fill(JSON.stringify(group));
    await dialog.getByRole("button", { name: "Save" }).click();
    await status("Saved model gpt-mock.");
    const grouped = await model("gpt-mock");
    expect(grouped).toMatchObject(group);
    expect(grouped!.provider).toBeUndefined();
    expect(gateway.app.ctx.live.current.config.models.get("gpt-mock")!.group!.deployments.map((d) => d.name)).toEqual(["primary", "backup"]);

    const tierDialog = page.getByTestId("tier-dialog");
    await page.getByRole("button", { name: "Edit tier premium" }).click();
    await tierDialog.getByLabel("Other settings (JSON)").fill('{"price_factor": "1.5"}');
    await shotBoth("other-settings");
    await tierDialog.getByRole("button", { name: "Save" }).click();
    await status("Saved tier premium.");
    expect((await served()).document.tiers.premium).toEqual({ models: ["*"], price_factor: "1.5" });
    // Emptied, the field is removed again.
    await page.getByRole("button", { name: "Edit tier premium" }).click();
    expect(JSON.parse(await tierDialog.getByLabel("Other settings (JSON)").inputValue())).toEqual({ price_factor: "1.5" });
    await tierDialog.getByLabel("Other settings (JSON)").fill("");
    await tierDialog.getByRole("button", { name: "Save" }).click();
    await status("Saved tier premium.");
    expect((await served()).document.tiers.premium).toEqual({ models: ["*"] });
  });

  it("pages through older versions of the history", async () => {
    const actor = { type: "cli" as const, id: null, name: "browser-test", clientAddress: null, requestId: null };
    for (let i = 0; i < 16; i += 1) {
      const base = (await served()).version!.version;
      await gateway.app.ctx.catalog.edit(actor, { op: "update", kind: "provider", name: "browserai", set: { timeout_ms: 1000 + i } }, base);
    }
    const latest = (await served()).version!.version;
    expect(latest).toBeGreaterThan(20);
    await page.reload();
    const history = page.getByTestId("catalog-versions");
    await expect.poll(() => history.getByRole("listitem").count()).toBe(20);
    expect(await page.getByTestId("catalog-version-count").textContent()).toBe("20+");
    await page.getByRole("button", { name: "Show older versions" }).click();
    await expect.poll(() => history.getByRole("listitem").count()).toBe(latest);
    await page.getByRole("button", { name: "Version 1", exact: true }).waitFor();
    expect(await page.getByRole("button", { name: "Show older versions" }).count()).toBe(0);
    await shotBoth("history");
  });
});
