// What every browser suite shares: Debian's Chromium (CHROMIUM_PATH overrides; missing, the suites
// fail under CI=true and are skipped elsewhere), the dashboard built from web/ as it is now, a
// headless persistent context at 1280 px, and the screenshot directory.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { build } from "vite";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const IN_CI = process.env.CI === "true" || process.env.CI === "1";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
/** describe.skipIf(SKIP_BROWSER): skipped only outside CI on a machine without Chromium. */
export const SKIP_BROWSER = !HAVE_CHROMIUM && !IN_CI;
export const SHOTS = join(process.cwd(), "test-output", "screenshots");
/** The password the suites give the accounts they sign in with. */
export const BROWSER_PASSWORD = "browser-test-password";

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** Builds the dashboard and opens Chromium; call from beforeAll (allow it 2 minutes). */
export async function openBrowser(): Promise<Browser> {
  if (!HAVE_CHROMIUM) throw new Error(`Chromium not found at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium)`);
  // Always test the UI as it is in web/ now, not a stale build.
  await build({ configFile: join(process.cwd(), "web", "vite.config.ts"), logLevel: "warn" });
  mkdirSync(SHOTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), "gw-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1280, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  // Generous: the suite runs browser files beside every other file on a busy two-core machine.
  page.setDefaultTimeout(20_000);
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
