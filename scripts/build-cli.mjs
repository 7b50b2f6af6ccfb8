// Bundles the `gateway` command into dist/cli/ with esbuild (decision 0034): dist/cli/main.js (the
// package's bin, what `npm start` runs) and the chunks it imports, one per lazily loaded branch
// (`serve`, each admin command, the OpenAPI document, tracing...), so a command still loads only what
// it needs but as a few files instead of hundreds: Node 20's ES module loader costs about a
// millisecond per module. Every dependency is bundled except better-sqlite3 (a native addon) and
// what src/ requires at run time through createRequire (undici, the AWS SDK pieces), which Node
// loads from node_modules as before. Source maps (without the sources) sit next to the chunks; the
// entry turns them on before loading the rest, so stack traces name src/ files.
//
// `node scripts/build-cli.mjs` (part of `npm run build` and of `npm start`'s rebuild when stale).
// It does not type-check: `npm run build` runs tsc first, `npm run typecheck` does on its own.
import { build } from "esbuild";
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
// Two levels below the root, like src/cli/: the modules that find files two folders up from
// import.meta.url (package.json, docs/compatibility.json, dist/web) find the same ones.
const OUT = join(ROOT, "dist", "cli");
// Built beside and swapped in at the end, so that a failed build leaves the last good one.
const STAGING = join(ROOT, "dist", `.cli-${process.pid}`);

// Chunks are ES modules; the CommonJS packages inside them call require() for Node's built-ins.
const REQUIRE_SHIM = 'import { createRequire as __gatewayCreateRequire } from "node:module"; const require = __gatewayCreateRequire(import.meta.url);';

/**
 * zod's `z.locales`: its error messages in ~50 languages, 364 KiB of the 764 that every command
 * loading the config parses. The gateway speaks English (zod's default, imported on its own by zod);
 * `z.locales` in the bundle has `en` only.
 */
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]v4[\\/]/.test(args.importer) ? { path: join(dirname(args.importer), "..", "locales", "index.js"), namespace: "zod-locales" } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({
      contents: 'export { default as en } from "./en.js";',
      resolveDir: dirname(args.path),
      loader: "js",
    }));
  },
};

rmSync(STAGING, { recursive: true, force: true });
try {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [{ in: "src/cli/bin.ts", out: "main" }],
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    outdir: STAGING,
    chunkNames: "[name]-[hash]",
    external: ["better-sqlite3"],
    banner: { js: REQUIRE_SHIM },
    // Names as written (a class or function renamed to avoid a clash would show as `Store2`).
    keepNames: true,
    sourcemap: "linked",
    sourcesContent: false,
    metafile: true,
    plugins: [zodEnglishOnly],
    logLevel: "warning",
  });
  writeFileSync(join(STAGING, "meta.json"), JSON.stringify(result.metafile));
  mkdirSync(join(ROOT, "dist"), { recursive: true });
  const previous = join(ROOT, "dist", `.cli-old-${process.pid}`);
  try {
    renameSync(OUT, previous);
  } catch (error) {
    if (error.code !== "ENOENT") throw error;
  }
  renameSync(STAGING, OUT);
  rmSync(previous, { recursive: true, force: true });
} finally {
  rmSync(STAGING, { recursive: true, force: true });
}
// What tsc compiled into dist/ before the command was bundled: nothing runs it any more.
for (const entry of readdirSync(join(ROOT, "dist"), { withFileTypes: true })) {
  if (!["cli", "web"].includes(entry.name) && !entry.name.startsWith(".cli-")) rmSync(join(ROOT, "dist", entry.name), { recursive: true, force: true });
}
