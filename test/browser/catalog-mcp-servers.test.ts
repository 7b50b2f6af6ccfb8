// The Catalog page's MCP servers in a real browser (issue 42, the live catalog): an administrator adds
// a remote server with an Authorization header in the dialog; the row shows the header as set with
// its last four characters and the page never holds the value; an edit that leaves the value empty
// keeps the stored one; Disable switches it off. Checked against the catalog and the stored values.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { parseUsd } from "../../src/core/money.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";

const VALUE = "Bearer browser-mcp-canary-7d3f";

describe.skipIf(SKIP_BROWSER)("the Catalog page's MCP servers in Chromium", () => {
  let gateway: TestGateway;
  let page: Page;
  let browser: Browser | undefined;
  const email = "catalog-mcp-admin@example.com";

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

  const server = async () => (await gateway.app.ctx.catalog.current()).document.mcp_servers?.tickets;
  const stored = async () => gateway.app.ctx.store.db.selectFrom("mcp_server_secrets").select(["name", "ciphertext"]).execute();

  it("adds a server with a header that is stored, never shown, kept on an edit, and disables it", async () => {
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(BROWSER_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Catalog", exact: true }).click();
    await page.getByRole("heading", { name: "MCP servers" }).waitFor();

    await page.getByRole("button", { name: "Add MCP server" }).click();
    const dialog = page.getByTestId("mcp-server-dialog");
    await dialog.getByLabel("Name", { exact: true }).fill("tickets");
    await dialog.getByLabel("URL (a remote server)").fill("https://mcp.tickets.example.com/mcp");
    await dialog.getByLabel(/^Headers/).fill(`Authorization: ${VALUE}`);
    await dialog.getByLabel("Price per call (USD)").fill("0.002");
    await dialog.getByRole("button", { name: "Save" }).click();
    await page.getByRole("status").filter({ hasText: "Added MCP server tickets." }).waitFor();

    expect(await server()).toEqual({
      url: "https://mcp.tickets.example.com/mcp",
      headers: { Authorization: { set: true, last4: VALUE.slice(-4) } },
      price_per_call_usd: "0.002",
    });
    const first = await stored();
    expect(first.map((r) => r.name)).toEqual(["Authorization"]);
    const table = page.getByRole("table", { name: /MCP server/ });
    await table.getByText(`Authorization (set, …${VALUE.slice(-4)})`).waitFor();
    expect(await page.content()).not.toContain(VALUE);
    await page.screenshot({ path: join(SHOTS, "catalog-mcp-servers-1280.png"), fullPage: true });

    // Edit: the header's value is left empty (kept), the price changes.
    await page.getByRole("button", { name: "Edit mcp_server tickets" }).click();
    const edit = page.getByTestId("mcp-server-dialog");
    expect(await edit.getByLabel(/^Headers/).inputValue()).toBe("Authorization:");
    await edit.getByLabel("Price per call (USD)").fill("0.005");
    await edit.getByRole("button", { name: "Save" }).click();
    await page.getByRole("status").filter({ hasText: "Saved MCP server tickets." }).waitFor();
    expect((await server())?.price_per_call_usd).toBe("0.005");
    expect((await stored()).map((r) => r.ciphertext)).toEqual(first.map((r) => r.ciphertext));

    await page.getByRole("button", { name: "Disable mcp_server tickets" }).click();
    await page.getByRole("status").filter({ hasText: "Disabled mcp_server tickets." }).waitFor();
    expect((await server())?.disabled).toBe(true);
  });
});
