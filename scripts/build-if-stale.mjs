// `npm start` on a fresh clone or after a source edit: rebuild dist/ only when a source file is newer.
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

const marker = "dist/cli/main.js";
if (!existsSync(marker) || newest("src") > statSync(marker).mtimeMs) {
  process.stderr.write("building dist/ ...\n");
  execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], { stdio: "inherit" });
}
