// The layer check itself (npm run check:layers, .dependency-cruiser.cjs): it passes a tree whose
// imports all run downward and fails each kind of forbidden import, in a small tree written for
// the test with the repository's own configuration.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = fileURLToPath(new URL("../..", import.meta.url));
const config = join(repo, ".dependency-cruiser.cjs");
const depcruise = join(repo, "node_modules", "dependency-cruiser", "bin", "dependency-cruise.mjs");

const trees: string[] = [];
afterEach(() => {
  for (const tree of trees.splice(0)) rmSync(tree, { recursive: true, force: true });
});

/** Writes the files (path → content) into a fresh tree with a tsconfig, as the repository has. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "layers-"));
  trees.push(root);
  const all = { "tsconfig.json": JSON.stringify({ compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", strict: true } }), ...files };
  for (const [path, content] of Object.entries(all)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

/** Runs the check over src and web/src of a tree: exit code and what it printed. */
async function check(root: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await run(process.execPath, [depcruise, "src", "web/src", "--config", config, "--output-type", "err"], { cwd: root });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

const WEB_OK = { "web/src/api.ts": "export const api = 1;\n", "web/src/pages/keys.ts": 'import { api } from "../api.js";\nexport const keys = api;\n' };

describe("the layer check", () => {
  it("passes imports that run downward", async () => {
    const root = tree({
      "src/core/money.ts": "export const cents = 1;\n",
      "src/http/server.ts": 'import { cents } from "../core/money.js";\nexport const port = cents;\n',
      "src/upstreams/registry.ts": 'import { kind } from "./openai/index.js";\nexport const registry = [kind];\n',
      "src/upstreams/openai/index.ts": "export const kind = 'openai';\n",
      "src/pipeline/forward.ts": 'import { registry } from "../upstreams/registry.js";\nexport const forward = registry;\n',
      ...WEB_OK,
    });
    const result = await check(root);
    expect(result.output).toContain("no dependency violations");
    expect(result.code).toBe(0);
  });

  it("fails an import from a lower layer to a higher one in src/, naming the rule", async () => {
    const root = tree({
      "src/core/money.ts": 'import { port } from "../http/server.js";\nexport const cents = port;\n',
      "src/http/server.ts": "export const port = 1;\n",
      ...WEB_OK,
    });
    const result = await check(root);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain("layer-src-core");
    expect(result.output).toContain("src/core/money.ts");
  });

  it("fails a type-only import that runs upward", async () => {
    const root = tree({
      "src/store/tables.ts": 'import type { Plan } from "../upstreams/plan.js";\nexport type Row = Plan;\n',
      "src/upstreams/plan.ts": "export interface Plan { path: string }\n",
      ...WEB_OK,
    });
    const result = await check(root);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain("layer-src-store");
  });

  it("fails an upward import in web/src", async () => {
    const root = tree({
      "src/core/money.ts": "export const cents = 1;\n",
      "web/src/api.ts": 'import { keys } from "./pages/keys.js";\nexport const api = keys;\n',
      "web/src/pages/keys.ts": "export const keys = 1;\n",
    });
    const result = await check(root);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain("layer-web-src-api-ts");
  });

  it("fails an import of an upstream type's folder from outside src/upstreams/", async () => {
    const root = tree({
      "src/upstreams/openai/index.ts": "export const kind = 'openai';\n",
      "src/pipeline/forward.ts": 'import { kind } from "../upstreams/openai/index.js";\nexport const forward = kind;\n',
      ...WEB_OK,
    });
    const result = await check(root);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain("upstream-type-through-registry");
  });
});
