// The previous release (deploy/previous-release.json), built from git into a cache directory kept
// between runs (/var/tmp/model-gateway-releases/<commit>): its tree by `git archive`, its build,
// its own production dependencies by `npm ci --omit=dev`, then a marker file. A second run finds
// the marker and takes no time. CI's clone may carry no tags: the tag is used when
// present (and must name the recorded commit), else the commit, an ancestor of main.
import { execFile, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { ROOT } from "./podman.js";

export const RELEASES_DIR = process.env.GATEWAY_RELEASES_DIR ?? "/var/tmp/model-gateway-releases";

export interface PreviousRelease {
  tag: string;
  commit: string;
  /** Where it is built: its own dist/cli/main.js and node_modules. */
  dir: string;
  /** Its `gateway` executable. */
  bin: string;
}

function progress(line: string): void {
  process.stderr.write(`previous-release: ${line}\n`);
}

async function git(args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)("git", args, { cwd: ROOT, timeout: 60_000 });
  return stdout.trim();
}

/** The recorded release's commit, through its tag when this clone has it. */
async function resolveCommit(tag: string, commit: string): Promise<string> {
  const tagged = await git(["rev-parse", "--verify", "--quiet", `refs/tags/${tag}^{commit}`]).catch(() => "");
  if (tagged) {
    if (tagged !== commit) throw new Error(`tag ${tag} names ${tagged}, deploy/previous-release.json records ${commit}`);
    progress(`tag ${tag} found (${commit.slice(0, 12)})`);
    return tagged;
  }
  const present = await git(["cat-file", "-e", `${commit}^{commit}`]).then(
    () => true,
    () => false,
  );
  if (!present) throw new Error(`neither tag ${tag} nor commit ${commit} is in this clone (a shallow clone? fetch with full history)`);
  progress(`no tag ${tag} in this clone; using commit ${commit.slice(0, 12)}`);
  return commit;
}

/** Runs a command in dir, its output kept for the error; npm's own variables of the outer run left out. */
function run(command: string, args: string[], dir: string, timeoutMs: number): Promise<void> {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith("npm_")) env[name] = value;
  return new Promise((resolve, reject) => {
    // Its own process group, so that a timeout ends npm's children too (a native compile outlives npm).
    const child = spawn(command, args, { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let output = "";
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString("utf8")).slice(-8000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, timeoutMs);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(" ")} in ${dir} ended with ${code ?? signal}:\n${output}`));
    });
  });
}

/**
 * better-sqlite3's native module (its install script was skipped): this checkout's binary when the
 * versions match (the same Node.js), else its own install script (a compile: minutes).
 */
async function nativeSqlite(building: string): Promise<void> {
  const version = (root: string): string | undefined => {
    try {
      return (JSON.parse(readFileSync(join(root, "node_modules", "better-sqlite3", "package.json"), "utf8")) as { version: string }).version;
    } catch {
      return undefined;
    }
  };
  const ours = join(ROOT, "node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node");
  if (version(building) !== undefined && version(building) === version(ROOT) && existsSync(ours)) {
    mkdirSync(join(building, "node_modules", "better-sqlite3", "build", "Release"), { recursive: true });
    copyFileSync(ours, join(building, "node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node"));
    return;
  }
  progress("npm rebuild better-sqlite3");
  await run("npm", ["rebuild", "better-sqlite3"], building, 10 * 60_000);
}

/** Builds the previous release once per machine (cold: a few minutes); then returns at once. */
export async function previousRelease(): Promise<PreviousRelease> {
  const recorded = JSON.parse(readFileSync(join(ROOT, "deploy", "previous-release.json"), "utf8")) as { tag: string; commit: string };
  const dir = join(RELEASES_DIR, recorded.commit);
  const bin = join(dir, "dist", "cli", "main.js");
  const marker = join(dir, ".built");
  if (existsSync(marker) && existsSync(bin)) {
    progress(`${recorded.tag} (${recorded.commit.slice(0, 12)}) already built in ${dir}`);
    return { ...recorded, dir, bin };
  }
  const commit = await resolveCommit(recorded.tag, recorded.commit);
  const started = Date.now();
  const building = `${dir}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  try {
    progress(`extracting ${commit.slice(0, 12)} into ${building}`);
    await run("bash", ["-c", `set -o pipefail; git -C "$1" archive --format=tar "$2" | tar -x -C "$3"`, "archive", ROOT, commit, building], ROOT, 120_000);
    // Its build with this checkout's build tools (a link to our node_modules: typescript, esbuild
    // and vite, the versions its lock names too): a full `npm ci` of its dev dependencies (agent CLIs,
    // browsers' drivers) took over 8 minutes on a loaded 2-core machine.
    // Its tsc step emits without type-checking (--noCheck): its own CI checked it, and the check
    // alone took over 5 minutes there.
    const build = (JSON.parse(readFileSync(join(building, "package.json"), "utf8")) as { scripts: { build: string } }).scripts.build.replace(/^tsc /, "tsc --noCheck ");
    progress(`building it: ${build}`);
    symlinkSync(join(ROOT, "node_modules"), join(building, "node_modules"), "dir");
    await run("bash", ["-c", `PATH="$PWD/node_modules/.bin:$PATH"; ${build}`], building, 10 * 60_000);
    unlinkSync(join(building, "node_modules"));
    // What it runs on: its own locked production dependencies.
    progress("npm ci --omit=dev (its production dependencies)");
    await run("npm", ["ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], building, 8 * 60_000);
    await nativeSqlite(building);
    if (!existsSync(join(building, "dist", "cli", "main.js"))) throw new Error(`the build left no dist/cli/main.js in ${building}`);
    writeFileSync(join(building, ".built"), `${commit}\n`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(building, dir);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    throw error;
  }
  progress(`${recorded.tag} built in ${Math.round((Date.now() - started) / 1000)} s`);
  return { ...recorded, dir, bin };
}
