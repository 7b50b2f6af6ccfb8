// The models page and the getting-started snippets in a real browser: playwright-core driving Debian's
// Chromium against a real gateway and a mock upstream (the harness of dashboard.test.ts). The snippets
// shown must be exactly web/src/snippets.ts's output, and the curl one, copied from the page, must get
// a 200. Every page at 1280 and 375 px, by keyboard; screenshots in test-output/screenshots/.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { parseUsd } from "../../src/core/money.js";
import { formatMoney } from "../../web/src/format.js";
import { gettingStartedSnippets, KEY_PLACEHOLDER, type Snippet, type SnippetInput } from "../../web/src/snippets.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

const run = promisify(execFile);

// Two more models in the standard tier: an image model (per-image prices) and one with a long-context tier.
const EXTRA = `
  - id: image-mock
    kind: image
    provider: mockai
    modalities: { input: [text], output: [image] }
    pricing: { per_image: { "1024x1024/hd": "0.08", default: "0.04" } }
  - id: long-mock
    kind: chat
    provider: mockai
    context_window: 1000000
    max_output_tokens: 64000
    modalities: { input: [text, image], output: [text] }
    pricing:
      input_per_mtok: "3.00"
      output_per_mtok: "15.00"
      web_search_per_call: "0.01"
      long_context: { above_input_tokens: 200000, input_per_mtok: "6.00", output_per_mtok: "22.50" }
`;

interface PriceView {
  dimension: string;
  unit: "token" | "unit";
  counts: string;
  usd: string;
  variant: string | null;
}

describe.skipIf(SKIP_BROWSER)("models page and getting started in Chromium", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let context: BrowserContext;
  let page: Page;
  let browser: Browser | undefined;
  let raw: string;
  const email = "starter@example.com";

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("hello from the mock", { usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } }));
    const config = mockConfig({ openaiUrl: mock.url, extra: EXTRA }).replace(
      "standard: { models: [gpt-mock, claude-mock] }",
      "standard: { models: [gpt-mock, claude-mock, image-mock, long-mock] }",
    );
    gateway = await startGateway(config);
    await gateway.app.ctx.store.accounts.create({ email, tier: "standard", balance: parseUsd("20")!, passwordHash: await hashPassword(BROWSER_PASSWORD) });
    browser = await openBrowser();
    context = browser.context;
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: gateway.url });
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
  });

  /** A full-page screenshot at 1280 px and at 375 px, where nothing may widen the page. */
  async function shotsAtBothWidths(name: string) {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: join(SHOTS, `${name}-1280.png`), fullPage: true });
    await page.setViewportSize({ width: 375, height: 800 });
    // What sticks out, named for the failure message: the outermost elements past the right edge.
    const wide = await page.evaluate<string[]>(`(() => {
      const past = (el) => el.getBoundingClientRect().right > window.innerWidth + 0.5;
      // Inside a sideways-scrolling box (a code block, a table region) is not past the page's edge.
      const scrolled = (el) => {
        for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) if (getComputedStyle(up).overflowX !== "visible") return true;
        return false;
      };
      return [...document.querySelectorAll("body *")]
        .filter((el) => !scrolled(el) && past(el) && !(el.parentElement && past(el.parentElement)))
        .map((el) => el.tagName.toLowerCase() + (el.className ? "." + el.className : ""));
    })()`);
    expect(wide).toEqual([]);
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    await page.screenshot({ path: join(SHOTS, `${name}-375.png`), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
  }

  /** Every input and select on the page has a label (or an aria-label). */
  async function expectLabelledInputs() {
    // Run in the page (a string: this file is compiled without the DOM's types).
    const unlabelled = await page.evaluate<string[]>(
      `[...document.querySelectorAll("input, select")].filter((el) => (el.labels?.length ?? 0) === 0 && !el.getAttribute("aria-label")).map((el) => el.outerHTML)`,
    );
    expect(unlabelled).toEqual([]);
  }

  /** The element with the keyboard focus shows a visible outline. */
  async function expectVisibleFocus() {
    const outline = await page.evaluate<{ style: string; width: string } | null>(`(() => {
      const el = document.activeElement;
      if (!el || el === document.body) return null;
      const style = getComputedStyle(el);
      return { style: style.outlineStyle, width: style.outlineWidth };
    })()`);
    expect(outline).not.toBeNull();
    expect(outline!.style).not.toBe("none");
    expect(outline!.width).not.toBe("0px");
  }

  const snippetInput = (rawKey: string | null): SnippetInput => ({
    baseUrl: gateway.url,
    rawKey,
    // The tier's first chat model, and the next one for Claude Code's Haiku slot (their limits from mockConfig).
    model: { id: "gpt-mock", maxOutputTokens: 4096 },
    smallModel: { id: "claude-mock", maxOutputTokens: 8192 },
  });

  async function shownSnippets(): Promise<Array<Pick<Snippet, "id" | "code">>> {
    await page.getByTestId("snippet-curl").waitFor();
    return page
      .locator("[data-snippet]")
      .evaluateAll((blocks) => blocks.map((block) => ({ id: block.getAttribute("data-snippet") as Snippet["id"], code: block.querySelector("code")!.textContent! })));
  }

  it("shows the snippets with the new key, exactly as the module renders them, and the curl one works", async () => {
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(BROWSER_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
    await page.getByLabel("Name").fill("start key");
    await page.getByRole("button", { name: "Create key" }).click();
    raw = (await page.getByTestId("raw-key").textContent())!.trim();
    await page.getByRole("heading", { name: "Getting started" }).waitFor();

    const expected = gettingStartedSnippets(snippetInput(raw)).map(({ id, code }) => ({ id, code }));
    expect(await shownSnippets()).toEqual(expected);

    // The curl snippet as the page shows it, run by a shell: a 200 from the gateway with the new key.
    const curl = (await page.getByTestId("snippet-curl").textContent())!;
    const { stdout } = await run("bash", ["-c", curl], { timeout: 20_000 });
    expect(JSON.parse(stdout)).toMatchObject({ object: "chat.completion", choices: [{ message: { content: "hello from the mock" } }] });

    // Copy puts the exact snippet on the clipboard.
    await page.getByRole("button", { name: "Copy the curl snippet" }).click();
    await page.getByRole("button", { name: "Copy the curl snippet" }).filter({ hasText: "Copied" }).waitFor();
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(curl);
    await expectLabelledInputs();
    await shotsAtBothWidths("20-new-key-getting-started");

    // Hiding the key takes it out of the snippets too.
    await page.getByRole("button", { name: "Hide key" }).click();
    await expect.poll(async () => (await shownSnippets()).find((s) => s.id === "curl")!.code).toContain(KEY_PLACEHOLDER);
    expect(await page.content()).not.toContain(raw);
  });

  it("reaches the snippets later from the key's row, with a placeholder and never the key", async () => {
    await page.getByRole("button", { name: "Done" }).click();
    await page.getByRole("link", { name: "Getting started with start key" }).click();
    await page.getByRole("heading", { name: "Getting started with key start key" }).waitFor();
    expect(await shownSnippets()).toEqual(gettingStartedSnippets(snippetInput(null)).map(({ id, code }) => ({ id, code })));
    expect(await page.content()).not.toContain(raw);

    // The model for the snippets can be changed; every snippet follows.
    await page.getByLabel("Model for the snippets").selectOption("long-mock");
    const longInput = { ...snippetInput(null), model: { id: "long-mock", maxOutputTokens: 64000 }, smallModel: { id: "gpt-mock", maxOutputTokens: 4096 } };
    await expect.poll(async () => (await shownSnippets()).find((s) => s.id === "codex")!.code).toContain('model = "long-mock"');
    expect(await shownSnippets()).toEqual(gettingStartedSnippets(longInput).map(({ id, code }) => ({ id, code })));

    // Keyboard: the summaries open a closed snippet, with a visible focus ring.
    const codex = page.locator('[data-snippet="codex"]');
    expect(await codex.getAttribute("open")).toBeNull();
    // From the snippet before it by Tab, as a keyboard user gets there.
    await page.locator('[data-snippet="claude-code"] summary').focus();
    await page.keyboard.press("Tab");
    expect(await page.evaluate<boolean>(`document.activeElement?.matches('[data-snippet="codex"] summary') ?? false`)).toBe(true);
    await expectVisibleFocus();
    await page.keyboard.press("Enter");
    expect(await codex.getAttribute("open")).toBe("");
    await page.keyboard.press("Tab"); // into the snippet's scrollable code block
    await expectVisibleFocus();
    await expectLabelledInputs();
    await shotsAtBothWidths("21-key-getting-started-later");
  });

  it("lists the tier's models with every price dimension, searchable, and narrows them to a key's policy", async () => {
    await page.getByRole("link", { name: "Models", exact: true }).click();
    await page.getByRole("heading", { name: "Models", level: 1 }).waitFor();
    expect(await page.getByRole("navigation", { name: "Main" }).locator('[aria-current="page"]').allTextContents()).toEqual(["Models"]);
    await expect.poll(() => page.getByTestId("model-count").textContent()).toBe("4 models");

    // Every price the API gives is on the model's card (zeros are listed as not charged).
    const api = (await page.evaluate(async () => (await fetch("/dashboard/api/models")).json())) as { data: Array<{ id: string; prices: PriceView[] }> };
    for (const model of api.data) {
      const card = page.locator(`article[data-model-id="${model.id}"]`);
      const text = (await card.textContent())!;
      for (const price of model.prices) {
        if (/^0\.0+$/.test(price.usd)) continue;
        const each = `per ${price.counts.replace(/s$/, "")}${price.variant ? ` (${price.variant})` : ""}`;
        const unit = price.unit === "token" ? "per 1M tokens" : each;
        expect(text, `${model.id} ${price.dimension}`).toContain(`${formatMoney(price.usd)} ${unit}`);
      }
    }
    const long = page.locator('article[data-model-id="long-mock"]');
    expect(await long.textContent()).toContain("1,000,000 tokens");
    expect(await long.getByRole("table", { name: "Above 200,000 input tokens" }).textContent()).toContain("$22.5000 per 1M tokens");
    expect(await page.locator('article[data-model-id="image-mock"]').textContent()).toContain("$0.0800 per image (1024x1024/hd)");

    // Search from the keyboard: the search box is reachable with Tab and filters as one types.
    await page.getByLabel("Search models").focus();
    await expectVisibleFocus();
    await page.keyboard.type("image");
    await expect.poll(() => page.getByTestId("model-count").textContent()).toBe("2 of 4 models");
    expect(await page.locator("article[data-model-id]").evaluateAll((a) => a.map((e) => e.getAttribute("data-model-id")))).toEqual(["image-mock", "long-mock"]);
    await page.getByLabel("Search models").fill("claude");
    await expect.poll(() => page.getByTestId("model-count").textContent()).toBe("1 of 4 models");
    await page.getByLabel("Search models").fill("");
    await expectLabelledInputs();
    await shotsAtBothWidths("22-models");

    // A key limited to one model: picking it shows only that model, as GET /v1/models would.
    const status = await page.evaluate(async () => {
      const session = (await (await fetch("/dashboard/api/session")).json()) as { csrf_token: string };
      const response = await fetch("/dashboard/api/keys", {
        method: "POST",
        headers: { "content-type": "application/json", "x-csrf-token": session.csrf_token },
        body: JSON.stringify({ name: "claude only", allowed_models: ["claude-mock"] }),
      });
      return response.status;
    });
    expect(status).toBe(201);
    await page.reload();
    await page.getByLabel("Models for").selectOption({ label: "Key claude only" });
    await expect.poll(() => page.getByTestId("model-count").textContent()).toBe("1 model");
    expect(await page.locator("article[data-model-id]").evaluateAll((a) => a.map((e) => e.getAttribute("data-model-id")))).toEqual(["claude-mock"]);
    expect(page.url()).toMatch(/\/dashboard\/models\?key=[\w-]+$/);
    await shotsAtBothWidths("23-models-for-key");

    // The key's getting-started page uses a model the key may use.
    await page.getByRole("link", { name: "Getting started with key claude only" }).click();
    await expect.poll(async () => (await shownSnippets()).find((s) => s.id === "curl")!.code).toContain('"model":"claude-mock"');

    // A revoked key's page says the gateway refuses it.
    const keyId = new URL(page.url()).pathname.split("/")[3]!;
    const revoked = await page.evaluate<number>(`(async () => {
      const session = await (await fetch("/dashboard/api/session")).json();
      const response = await fetch("/dashboard/api/keys/${keyId}?confirm=true", { method: "DELETE", headers: { "x-csrf-token": session.csrf_token } });
      return response.status;
    })()`);
    expect(revoked).toBe(200);
    await page.reload();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("This key is revoked");
  });
});
