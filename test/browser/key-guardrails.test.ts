// Guardrails picked in the key editor and the workspace budgets form at 1280 px (docs/dashboard.md, "Key policies"), in Chromium:
// the operator's `applies: all` guardrail shown ticked and fixed, a `selected` one ticked by the
// user, saved with the key's PATCH, and then blocking that key's requests. Screenshot:
// test-output/screenshots/key-guardrails-1280.png.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { parseUsd } from "../../src/core/money.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

const GUARDRAILS = `
guardrails:
  - name: no-cards
    kind: builtin
    patterns: [credit_card]
    mode: block
  - name: no-email
    description: Blocks e-mail addresses
    kind: builtin
    patterns: [email]
    applies: selected
    mode: block
`;

describe.skipIf(SKIP_BROWSER)("guardrails in the key editor, in Chromium", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let page: Page;
  let browser: Browser | undefined;
  const email = "guardrails-user@example.com";
  let keyRaw = "";

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("hello"));
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, extra: GUARDRAILS }));
    const store = gateway.app.ctx.store;
    const user = await store.accounts.create({ email, tier: "standard", balance: parseUsd("5")!, passwordHash: await hashPassword(BROWSER_PASSWORD) });
    keyRaw = (await store.keys.create({ accountId: user.id, name: "guarded key", budgetCap: null, tokenCap: null })).raw;
    browser = await openBrowser();
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
  });

  const sendEmail = async () =>
    (
      await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${keyRaw}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "mail jane.doe@example.com" }] }),
      })
    ).status;

  it("ticks a selected guardrail on a key; the all one is fixed; the key's requests then meet it", async () => {
    expect(await sendEmail()).toBe(200);
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(BROWSER_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Edit caps of guarded key" }).click();
    const editor = page.getByRole("dialog", { name: "Edit key guarded key" });
    await editor.waitFor();
    const group = editor.getByRole("group", { name: "Key guardrails" });
    await expect.poll(() => group.getByRole("checkbox").count()).toBe(2);
    const all = group.getByLabel(/no-cards/);
    expect(await all.isChecked()).toBe(true);
    expect(await all.isDisabled()).toBe(true);
    expect(await group.textContent()).toContain("Blocks e-mail addresses");
    await group.getByLabel(/no-email/).check();
    await page.screenshot({ path: join(SHOTS, "key-guardrails-1280.png"), fullPage: true });
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(1280);
    await editor.getByRole("button", { name: "Save caps" }).click();
    await editor.waitFor({ state: "detached" });
    const account = (await gateway.app.ctx.store.accounts.getByEmail(email))!;
    await expect.poll(async () => (await gateway.app.ctx.store.keys.listByAccount(account.id))[0]!.guardrails).toEqual(["no-email"]);
    expect(await sendEmail()).toBe(400);

    // Reopened: the saved choice; unticked and saved, the key's requests pass again.
    await page.getByRole("button", { name: "Edit caps of guarded key" }).click();
    expect(await group.getByLabel(/no-email/).isChecked()).toBe(true);
    await group.getByLabel(/no-email/).uncheck();
    await editor.getByRole("button", { name: "Save caps" }).click();
    await editor.waitFor({ state: "detached" });
    await expect.poll(async () => (await gateway.app.ctx.store.keys.listByAccount(account.id))[0]!.guardrails).toEqual([]);
    expect(await sendEmail()).toBe(200);
  });

  it("ticks a selected guardrail on a workspace's budgets form; the workspace's keys then meet it", async () => {
    const store = gateway.app.ctx.store;
    const account = (await store.accounts.getByEmail(email))!;
    const team = await store.workspaces.create("Guarded team", account.id);
    const { raw } = await store.keys.create({ accountId: account.id, workspaceId: team.id, name: "team key" });
    await page.goto(`${gateway.url}/dashboard/workspaces/${team.id}`);
    const group = page.getByRole("group", { name: "Workspace guardrails" });
    await expect.poll(() => group.getByRole("checkbox").count()).toBe(2);
    await group.getByLabel(/no-email/).check();
    await page.getByRole("button", { name: "Save budgets" }).click();
    await expect.poll(async () => (await store.workspaceBudgets.policy(team.id))?.guardrails).toEqual(["no-email"]);
    await expect.poll(() => page.getByTestId("workspace-budget").textContent()).toContain("Guardrails switched on: no-email");
    await page.screenshot({ path: join(SHOTS, "workspace-guardrails-1280.png"), fullPage: true });
    const status = (
      await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "mail jane.doe@example.com" }] }),
      })
    ).status;
    expect(status).toBe(400);
    // The user's key outside the workspace is not touched.
    expect(await sendEmail()).toBe(200);
  });
});
