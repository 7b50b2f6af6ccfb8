// The web UI in a real browser: playwright-core driving Debian's Chromium (/usr/bin/chromium) against
// a real gateway and a mock upstream. Without Chromium the suite fails under CI=true and is skipped
// elsewhere. Screenshots go to test-output/screenshots/ for review.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { updateAccount } from "../../src/admin/operations.js";
import { parseUsd } from "../../src/core/money.js";
import { keyFingerprint } from "../../src/upstreams/upstream-health.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

describe.skipIf(SKIP_BROWSER)("dashboard in Chromium", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let page: Page;
  let browser: Browser | undefined;
  const emails = { owner: "owner@example.com", guest: "guest@example.com" };

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("hello", { usage: { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500 } }));
    // One routing group, for the Upstreams page's deployments table.
    const grouped = `
  - id: grouped-mock
    kind: chat
    pricing: { input_per_mtok: "1", output_per_mtok: "2" }
    deployments:
      - { name: primary, provider: mockai }
`;
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, extra: grouped }));
    const store = gateway.app.ctx.store;
    const hash = await hashPassword(BROWSER_PASSWORD);
    await store.accounts.create({ email: emails.owner, tier: "standard", balance: parseUsd("20")!, passwordHash: hash, isAdmin: true });
    await store.accounts.create({ email: emails.guest, tier: "standard", balance: parseUsd("5")!, passwordHash: hash });
    browser = await openBrowser();
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
  });

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  async function signIn(email: string, url = `${gateway.url}/dashboard`) {
    await page.goto(url);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(BROWSER_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
  }

  it("signs in, creates a key, reads it once, shows it again, uses it, revokes and deletes it", async () => {
    await signIn(emails.owner);
    await shot("01-signed-in");
    await page.getByLabel("Name").fill("browser key");
    await page.getByLabel("Budget cap (USD, optional)").fill("5");
    await page.getByRole("button", { name: "Create key" }).click();
    const raw = (await page.getByTestId("raw-key").textContent())!.trim();
    expect(raw).toMatch(/^mgw_[A-Za-z0-9_-]{43}$/);
    await shot("02-key-created");
    await page.getByRole("button", { name: "Hide key" }).click();
    await expect.poll(() => page.getByTestId("raw-key").count()).toBe(0);
    await page.getByRole("button", { name: "Show key again" }).click();
    expect((await page.getByTestId("raw-key").textContent())!.trim()).toBe(raw);
    await shot("03-key-shown-again");

    // A gateway call with the key, then the usage page shows it.
    const call = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(call.status).toBe(200);
    await page.getByRole("link", { name: "Usage" }).click();
    await expect.poll(() => page.getByTestId("requests").textContent()).toBe("1");
    await expect.poll(() => page.getByRole("table", { name: "By key" }).textContent()).toContain("browser key");
    expect(await page.getByRole("table", { name: "By model" }).textContent()).toContain("gpt-mock");
    // Prompt caching per model: no cache reads in this call, so a hit ratio of 0 and nothing saved.
    const caching = await page.getByRole("table", { name: "Prompt caching, per model" }).textContent();
    expect(caching).toContain("gpt-mock");
    expect(caching).toContain("0.0%");
    expect(await page.getByRole("table", { name: "Ledger rows, newest first" }).textContent()).toContain("0.0018");
    await shot("04-usage");

    await page.getByRole("link", { name: "Keys" }).click();
    await page.getByRole("button", { name: "Revoke browser key" }).click();
    await page.getByRole("button", { name: "Yes, revoke browser key" }).click();
    await page.getByRole("status").filter({ hasText: "revoked" }).waitFor();
    await expect.poll(() => page.locator("tr", { hasText: "browser key" }).textContent()).toContain("revoked");
    await shot("05-key-revoked");
    const refused = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${raw}` } });
    expect(refused.status).toBe(401);
    await page.getByRole("button", { name: "Delete browser key permanently" }).click();
    await page.getByRole("button", { name: "Yes, delete browser key forever" }).click();
    await expect.poll(() => page.locator("tr", { hasText: "browser key" }).count()).toBe(0);
    await shot("06-key-deleted");
  });

  it("creates a workspace, invites a second account, which accepts the invite", async () => {
    await page.getByRole("link", { name: "Workspaces" }).click();
    await page.getByLabel("Workspace name").fill("Platform team");
    await page.getByRole("button", { name: "Create workspace" }).click();
    await page.getByRole("heading", { name: "Platform team" }).waitFor();
    await page.getByRole("button", { name: "Create invite link" }).click();
    const link = (await page.getByTestId("invite-link").textContent())!.trim();
    expect(link).toMatch(/\/dashboard\/invite#inv_/);
    await shot("07-invite-created");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor();

    await signIn(emails.guest, link);
    await page.getByRole("button", { name: "Accept invite" }).click();
    await page.getByRole("status").filter({ hasText: "You joined" }).waitFor();
    await shot("08-invite-accepted");
    await page.getByRole("link", { name: "Platform team" }).click();
    await expect.poll(() => page.getByRole("table", { name: "Members" }).textContent()).toContain(emails.guest);
    expect(await page.getByRole("table", { name: "Members" }).textContent()).toContain(emails.owner);
    await shot("09-workspace-as-member");

    // Using the same invite again shows the API's error type.
    await page.goto(link);
    await page.getByRole("button", { name: "Accept invite" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("invite_used");
    await shot("10-invite-used-error");
  });

  it("edits a key's limits, per model too, and shows each limit's use this minute with the account's", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await signIn(emails.owner);
    const store = gateway.app.ctx.store;
    const owner = (await store.accounts.getByEmail(emails.owner))!;
    await store.audited({ type: "cli", id: null, name: "browser test", clientAddress: null, requestId: null }, (tx) =>
      updateAccount(tx, owner.id, { limits: { requests_per_minute: 100 } }),
    );
    await page.getByLabel("Name").fill("limited key");
    await page.getByRole("button", { name: "Create key" }).click();
    const raw = (await page.getByTestId("raw-key").textContent())!.trim();
    await page.getByRole("button", { name: "Done" }).click();

    // The editor is a dialog; a line it cannot read keeps it open, naming the line, with what was typed.
    await page.getByRole("button", { name: "Edit caps of limited key" }).click();
    const editor = page.getByRole("dialog", { name: "Edit key limited key" });
    await editor.getByLabel("Requests per minute").fill("5");
    await editor.getByLabel(/^Per-model limits/).fill("gpt-mock rpm=2 concurrent=1\nnot-a-setting");
    await editor.getByRole("button", { name: "Save caps" }).click();
    await expect.poll(() => editor.getByRole("alert").textContent()).toContain("line 2: give at least one of rpm=, tpm=, concurrent=");
    expect(await editor.getByLabel("Requests per minute").inputValue()).toBe("5");
    await editor.getByLabel(/^Per-model limits/).fill("gpt-mock rpm=2 concurrent=1");
    await editor.getByRole("button", { name: "Save caps" }).click();
    await editor.waitFor({ state: "detached" });
    await page.getByRole("status").filter({ hasText: "Caps, policy and limits of limited key saved." }).waitFor();
    const key = (await store.keys.listByAccount(owner.id)).find((k) => k.name === "limited key")!;
    expect(key.limits).toMatchObject({ requestsPerMinute: 5, models: new Map([["gpt-mock", expect.objectContaining({ requestsPerMinute: 2, concurrentRequests: 1 })]]) });

    mock.handler = (_req, res) => json(res, 200, chatCompletion("hello"));
    const call = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(call.status).toBe(200);
    expect(call.headers.get("x-ratelimit-remaining-requests")).toBe("1");
    await page.getByRole("button", { name: "Limits in use of limited key" }).click();
    const table = page.getByRole("table", { name: "Limits of limited key and this minute's use" });
    // Requests and requests in flight exactly; tokens are counted in every window (here the call's actual 15), limited or not.
    const cells = async (limitOf: string) =>
      (
        await table
          .getByRole("row")
          .filter({ has: page.getByRole("rowheader", { name: limitOf, exact: true }) })
          .getByRole("cell")
          .allTextContents()
      ).slice(0, 3);
    await expect.poll(() => cells("Key · gpt-mock")).toEqual(["1 / 2", "15 (no limit)", "0 / 1"]);
    expect(await cells("Key")).toEqual(["1 / 5", "15 (no limit)", "0 (no limit)"]);
    expect(await cells("Account")).toEqual(["1 / 100", "15 (no limit)", "0 (no limit)"]);
    await shot("14-key-limits-1280");
    await page.setViewportSize({ width: 375, height: 800 });
    await shot("15-key-limits-375");
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it("lets an administrator suspend and restore an account", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await signIn(emails.owner);
    await page.getByRole("link", { name: "Accounts" }).click();
    // Asked first: Cancel leaves the account as it was.
    await page.getByLabel(`Status of ${emails.guest}`).selectOption("suspended");
    const confirm = page.getByRole("alertdialog", { name: `Suspend ${emails.guest}?` });
    await confirm.getByRole("button", { name: "Cancel" }).click();
    expect(await page.getByLabel(`Status of ${emails.guest}`).inputValue()).toBe("active");
    expect((await gateway.app.ctx.store.accounts.getByEmail(emails.guest))?.status).toBe("active");
    await page.getByLabel(`Status of ${emails.guest}`).selectOption("suspended");
    expect(await confirm.textContent()).toContain("every one of its keys is refused at once");
    await shot("11-admin-suspend-confirm");
    await confirm.getByRole("button", { name: `Yes, suspend ${emails.guest}` }).click();
    await page.getByRole("status").filter({ hasText: "is now suspended" }).waitFor();
    await shot("11-admin-suspended");
    const guest = await gateway.app.ctx.store.accounts.getByEmail(emails.guest);
    expect(guest?.status).toBe("suspended");
    await page.getByLabel(`Status of ${emails.guest}`).selectOption("active");
    await page.getByRole("status").filter({ hasText: "is now active" }).waitFor();
  });

  it("shows an administrator each upstream key's breaker, refreshing by itself when one opens", async () => {
    await page.getByRole("link", { name: "Upstreams" }).click();
    expect(await page.getByRole("navigation", { name: "Main" }).locator('[aria-current="page"]').allTextContents()).toEqual(["Upstreams"]);
    const fingerprint = keyFingerprint("mockai", "sk-mock-openai-key-0001"); // mockConfig's key
    const row = page.getByRole("region", { name: "mockai: 1 key" }).getByRole("row", { name: new RegExp(fingerprint) });
    await expect.poll(() => row.getByTestId("breaker-state").textContent()).toBe("✓ closed");

    // Failures through the gateway open the key's breaker (10 requests in the window, half failed).
    mock.handler = (_req, res) => json(res, 500, { error: { message: "upstream down" } });
    const { raw } = await gateway.createAccount({ balance: "10" });
    const store = gateway.app.ctx.store;
    const scope = `key:${fingerprint}`;
    for (let i = 0; i < 20 && (await store.upstreamHealth.all()).find((r) => r.scope === scope)?.state !== "open"; i++) {
      await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "hi" }] }),
      });
    }
    await gateway.app.ctx.pipeline.health.writeWindows();
    // No click: the page reloads every 5 s.
    await expect.poll(() => row.getByTestId("breaker-state").textContent(), { timeout: 8_000 }).toBe("✕ open");
    const cells = await row.getByRole("cell").allTextContents();
    expect(cells).toContain("shared");
    expect(cells.some((c) => /^\d+% \(\d+ failed\)$/.test(c))).toBe(true);
    expect(cells.some((c) => /^in \d+ s$/.test(c))).toBe(true);
    expect(await page.content()).not.toContain("sk-mock-openai-key-0001");
    const deployment = page.getByRole("region", { name: "Routing deployments" }).getByRole("row", { name: /grouped-mock\/primary/ });
    expect(await deployment.getByRole("cell").allTextContents()).toContain("mockai");
    expect(await deployment.getByTestId("breaker-state").textContent()).toBe("✓ closed");

    // Keyboard: the refresh button works from the keyboard and the table region takes focus to scroll.
    await page.getByRole("button", { name: "Refresh" }).focus();
    await page.keyboard.press("Enter");
    await page.keyboard.press("Tab");
    expect(await page.getByRole("checkbox", { name: "Refresh every 5 s" }).and(page.locator(":focus")).count()).toBe(1);
    await shot("12-upstreams-1280");
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    await expect.poll(() => row.getByTestId("breaker-state").isVisible()).toBe(true);
    await shot("13-upstreams-375");
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});
