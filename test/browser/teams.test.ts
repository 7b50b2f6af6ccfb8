// The budget hierarchy in a real browser (issue 41 item 4): an administrator opens Teams from the
// admin navigation and sees every workspace with its budget, spend and what is left; opens a team it
// is not a member of and reads its members' spend against the member budget and its models, with no
// control to change anything; a member of the team sees the same figures. Each page is shot at 1280
// and 375 px wide into test-output/screenshots/ (teams-*.png) and must not scroll sideways at 375 px.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { formatUsd, parseUsd } from "../../src/core/money.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { formatMoney } from "../../web/src/format.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

describe.skipIf(SKIP_BROWSER)("teams and their budgets, in Chromium", () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let page: Page;
  let browser: Browser | undefined;
  let teamId = "";
  let spent = "";
  let benId = "";
  let annId = "";
  const admin = "teams-admin@example.com";
  const ann = "ann@example.com";

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = async (_req, res) => json(res, 200, chatCompletion("ok", { usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 } }));
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }));
    const store = gateway.app.ctx.store;
    const passwordHash = await hashPassword(BROWSER_PASSWORD);
    await store.accounts.create({ email: admin, tier: "standard", balance: parseUsd("5")!, passwordHash, isAdmin: true });
    const owner = await store.accounts.create({ email: ann, tier: "standard", balance: parseUsd("5")!, passwordHash });
    const ben = await store.accounts.create({ email: "ben@example.com", tier: "standard", balance: parseUsd("5")! });
    const team = await store.workspaces.create("Atlas", owner.id);
    await store.workspaces.addMember(team.id, ben.id, "member");
    await store.workspaces.create("Borealis", ben.id);
    await store.workspaceBudgets.setPolicy(team.id, { monthlyBudget: parseUsd("100")!, memberMonthlyBudget: parseUsd("30")!, allowedModels: ["gpt-mock"] });
    teamId = team.id;
    benId = ben.id;
    annId = owner.id;
    const { key, raw } = await store.keys.create({ accountId: ben.id, workspaceId: team.id });
    const answer = await fetch(new URL("/v1/chat/completions", gateway.url), {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], max_tokens: 100 }),
    });
    expect(answer.status).toBe(200);
    spent = formatUsd(BigInt((await store.db.selectFrom("ledger").select("cost_nano").where("key_id", "=", key.id).executeTakeFirstOrThrow()).cost_nano));
    browser = await openBrowser();
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
  });

  /** Screenshots at 1280 and 375 px; at 375 the page must not scroll sideways (tables scroll in their region). */
  async function shotBoth(name: string) {
    await page.screenshot({ path: join(SHOTS, `teams-${name}-1280.png`), fullPage: true });
    await page.setViewportSize({ width: 375, height: 800 });
    try {
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
      await page.screenshot({ path: join(SHOTS, `teams-${name}-375.png`), fullPage: true });
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  }

  async function signIn(email: string) {
    await page.goto(`${gateway.url}/dashboard`);
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

  it("an administrator lists every team with budget, spend and what is left, and reads one it is not in", async () => {
    await signIn(admin);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Teams", exact: true }).click();
    await page.getByRole("heading", { name: "Teams" }).waitFor();
    const atlas = page.getByTestId(`team-${teamId}`);
    await atlas.waitFor();
    const cells = await atlas.locator("td").allInnerTexts();
    // Members, budget, spent, held, left, tokens, per member, models.
    const left = formatUsd(parseUsd("100")! - parseUsd(spent)!);
    expect(cells).toEqual(["2", formatMoney("100.00"), formatMoney(spent), formatMoney("0.00"), formatMoney(left), "1,100 used", formatMoney("30.00"), "gpt-mock"]);
    await expect.poll(() => page.getByRole("row").filter({ hasText: "Borealis" }).count()).toBe(1);
    await shotBoth("list");

    await atlas.getByRole("link", { name: "Atlas" }).click();
    await page.getByRole("heading", { name: "Atlas" }).waitFor();
    await page.getByText("as an administrator you see this workspace, read-only").waitFor();
    const ben = page.getByTestId(`member-spend-${benId}`);
    await ben.waitFor();
    expect(await ben.locator("td").allInnerTexts()).toEqual([
      formatMoney(spent),
      formatMoney("0.00"),
      formatMoney("30.00"),
      formatMoney(formatUsd(parseUsd("30")! - parseUsd(spent)!)),
    ]);
    expect(await page.getByTestId("workspace-models").innerText()).toBe("gpt-mock");
    // Nothing to change: no budget form, no invites, no role choice, no remove or revoke button.
    expect(await page.getByRole("button", { name: "Save budgets" }).count()).toBe(0);
    expect(await page.getByRole("form", { name: "Create an invite" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: /^(Remove|Revoke|Leave)/ }).count()).toBe(0);
    await shotBoth("workspace-read-only");
  });

  it("a member sees the team's budget, its members' spend against the member budget and its models", async () => {
    await signIn(ann);
    expect(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Teams", exact: true }).count()).toBe(0);
    await page.goto(`${gateway.url}/dashboard/workspaces/${teamId}`);
    await page.getByRole("heading", { name: "Atlas" }).waitFor();
    const annRow = page.getByTestId(`member-spend-${annId}`);
    await annRow.waitFor();
    expect(await annRow.locator("td").allInnerTexts()).toEqual([formatMoney("0.00"), formatMoney("0.00"), formatMoney("30.00"), formatMoney("30.00")]);
    await page.getByRole("button", { name: "Save budgets" }).waitFor();
    await shotBoth("workspace-owner");
  });
});
