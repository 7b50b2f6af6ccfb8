// `npm start` after a source edit: rebuild the server (dist/) or the dashboard (dist/web) only when
// one of their source files is newer than what was built.
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
if (!existsSync(server) || newest("src") > statSync(server).mtimeMs) {
  process.stderr.write("building dist/ ...\n");
  execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], { stdio: "inherit" });
}
const ui = "dist/web/index.html";
if (!existsSync(ui) || newest("web") > statSync(ui).mtimeMs) {
  process.stderr.write("building dist/web ...\n");
  execFileSync(process.execPath, ["node_modules/vite/bin/vite.js", "build", "--config", "web/vite.config.ts"], { stdio: "inherit" });
}
