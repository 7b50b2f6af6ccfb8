// The response cache's dashboard control in a real browser at 1280 px (issue 46 item 2): a user opens
// a key's "Cache" control on the Keys page, sees it off, turns it on with a TTL, and the key's second
// identical request is answered from the cache (x-gateway-cache: hit) while the mock upstream counts
// one call. The control then shows the key's own setting as what applies. Shot into
// test-output/screenshots/cache-setting-1280.png.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { parseUsd } from "../../src/core/money.js";
import { BROWSER_PASSWORD, openBrowser, SHOTS, SKIP_BROWSER, type Browser } from "../support/browser.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

describe.skipIf(SKIP_BROWSER)("response cache control, in Chromium", () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let page: Page;
  let browser: Browser | undefined;
  let raw = "";
  let upstreamCalls = 0;
  const email = "cache-user@example.com";

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = async (_req, res) => {
      upstreamCalls++;
      json(res, 200, chatCompletion("cached answer", { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
    };
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, extra: "\ncache:\n  default_ttl_seconds: 120\n  max_ttl_seconds: 3600\n" }));
    const store = gateway.app.ctx.store;
    const account = await store.accounts.create({ email, tier: "standard", balance: parseUsd("5")!, passwordHash: await hashPassword(BROWSER_PASSWORD) });
    raw = (await store.keys.create({ accountId: account.id, name: "cache-key" })).raw;
    browser = await openBrowser();
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await mock?.close();
  });

  const ask = () =>
    fetch(new URL("/v1/chat/completions", gateway.url), {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "Same question" }], max_tokens: 50 }),
    });

  it("turns the cache on for a key; the second identical request is a hit and the upstream sees one call", async () => {
    await page.goto(`${gateway.url}/dashboard`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(BROWSER_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Keys" }).click();

    await page.getByRole("button", { name: "Response cache of cache-key" }).click();
    const section = page.getByRole("region", { name: "Response cache of cache-key" });
    await expect.poll(() => section.getByTestId("cache-applies").textContent()).toBe("Off: answers are not cached.");
    // Gateway scope is not allowed by this config: no control offers it.
    expect(await section.getByRole("combobox").count()).toBe(0);
    await section.getByRole("checkbox").check();
    const ttl = section.getByRole("spinbutton");
    expect(await ttl.inputValue()).toBe("120");
    await ttl.fill("600");
    await section.getByRole("button", { name: "Save cache setting" }).click();
    await section.getByText("Response cache of cache-key saved.").waitFor();
    await expect
      .poll(() => section.getByTestId("cache-applies").textContent())
      .toBe("On (its own setting): identical requests are answered from the cache for 600 s, shared with this account only.");
    await page.screenshot({ path: join(SHOTS, "cache-setting-1280.png"), fullPage: true });

    const first = await ask();
    expect(first.status).toBe(200);
    expect(first.headers.get("x-gateway-cache")).toBe("miss");
    await first.text();
    const second = await ask();
    expect(second.status).toBe(200);
    expect(second.headers.get("x-gateway-cache")).toBe("hit");
    const answer = (await second.json()) as { choices: Array<{ message: { content: string } }> };
    expect(answer.choices[0]!.message.content).toBe("cached answer");
    expect(upstreamCalls).toBe(1);
  });
});
