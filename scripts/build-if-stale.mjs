// `npm start` after a source edit: rebuild the `gateway` command (dist/cli, bundled by esbuild in a
// few seconds; not type-checked, which `npm run typecheck` does) or the dashboard (dist/web) only when
// one of their source files is newer than what was built. `--cli-only`: the command alone (what the
// tests that start it need; test/support/build-cli.ts).
import { execFileSync } from "node:child_process";
import { readdirSync, statSync, existsSync } from "node:fs";
import { join } from "node:path";

function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

const server = "dist/cli/main.js";
// meta.json: written by the bundler only (a dist/ compiled by tsc before decision 0034 has none).
const bundled = existsSync(server) && existsSync("dist/cli/meta.json");
if (!bundled || Math.max(newest("src"), statSync("scripts/build-cli.mjs").mtimeMs) > statSync(server).mtimeMs) {
  process.stderr.write("building dist/cli ...\n");
  execFileSync(process.execPath, ["scripts/build-cli.mjs"], { stdio: "inherit" });
}
if (process.argv.includes("--cli-only")) process.exit(0);
const ui = "dist/web/index.html";
if (!existsSync(ui) || newest("web") > statSync(ui).mtimeMs) {
  process.stderr.write("building dist/web ...\n");
  execFileSync(process.execPath, ["node_modules/vite/bin/vite.js", "build", "--config", "web/vite.config.ts"], { stdio: "inherit" });
}
