// The built `gateway` command (dist/cli/main.js) is the esbuild bundle of decision 0034: an admin
// command loads a few chunks of dist/cli and none of the ES module packages (Kysely, zod) from
// node_modules, where the unbundled build loaded hundreds of files; the bundle still finds the files
// it reads relative to itself. Its CPU is measured in bench/startup.ts, not here.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GATEWAY_BIN } from "./gateway-process.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

// Preloaded: an ES module resolve hook (on the loader's thread) that appends every URL it resolves to a file.
const HOOK = `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.LOADED_FILE, result.url + "\\n");
  return result;
}`;
const PRELOAD = `data:text/javascript,${encodeURIComponent(`import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOK)}`)});`)}`;

describe("the built gateway command", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "gw-bundle-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function gateway(args: string[], loadedFile?: string): Promise<string> {
    const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_DATA_DIR: dir, LOADED_FILE: loadedFile ?? "" };
    delete env.GATEWAY_CONFIG;
    delete env.DATABASE_URL;
    const { stdout } = await run(process.execPath, [...(loadedFile ? ["--import", PRELOAD] : []), GATEWAY_BIN, ...args], { cwd: dir, env, timeout: 60_000 });
    return stdout;
  }

  it("runs an admin command from a few chunks of dist/cli, with Kysely and zod inside them", { timeout: 120_000 }, async () => {
    await gateway(["admin", "accounts", "create", "--email", "bundle@example.com"]);
    const loadedFile = join(dir, "loaded.txt");
    expect(await gateway(["admin", "accounts", "list"], loadedFile)).toContain("bundle@example.com");
    const loaded = [...new Set(readFileSync(loadedFile, "utf8").trim().split("\n"))].filter((url) => url.startsWith("file:"));
    const fromPackages = loaded.filter((url) => url.includes("/node_modules/"));
    expect(fromPackages.filter((url) => /\/node_modules\/(kysely|zod|yaml)\//.test(url))).toEqual([]);
    const chunks = loaded.filter((url) => url.includes("/dist/cli/"));
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.length).toBeLessThan(60);
    expect(loaded.length - chunks.length).toBeLessThan(5);
  });

  it("prints the package's version (read from the root, two levels above the chunks)", { timeout: 60_000 }, async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    expect((await gateway(["--version"])).trim()).toBe(pkg.version);
  });
});
