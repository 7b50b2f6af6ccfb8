// Vitest's global set-up: the tests that start the gateway as a process run the built `gateway`
// command (dist/cli/main.js), so it is rebuilt here, once before any test file runs, when a source
// is newer (esbuild, a few seconds; test files running in parallel must not rebuild under each other).
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export default function buildCliIfStale(): void {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  execFileSync(process.execPath, ["scripts/build-if-stale.mjs", "--cli-only"], { cwd: root, stdio: "inherit", timeout: 300_000 });
}
