// `node --import tsx bench/startup.ts [--runs 5] [--main DIR/dist/cli/main.js ...]`: what the built
// `gateway` command costs to start, as CPU (user + system, the process's own accounting read at its
// exit, so a busy machine shows as wall time, not CPU) and wall time, medians of --runs: `--help`,
// `--version`, an admin command on an existing SQLite database (the usual case) and on a new one
// (which it creates and migrates), and `serve --workers 1` until GET /healthz answers, on a new
// database (the first start: migrations and the administrator account) and on an existing one (a
// restart). An existing database is made, unmeasured, by `admin accounts create` in the run's
// directory. Builds dist/cli first when stale. --main measures another build instead (an A/B against a
// checkout of an earlier commit); given more than once, the builds are measured in one run, in turn
// (A B B A ...: a host getting busier weighs on each alike), each with its median and range and its
// median's ratio to the first's. Targets: --help, --version and admin commands ~150 ms of CPU; a
// worker ready within 1 s.
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { median } from "./lib/stats.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
const option = (name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const runs = Number(option("--runs") ?? 5) || 5;
const mains = args.flatMap((arg, i) => (arg === "--main" && args[i + 1] !== undefined ? [args[i + 1]!] : []));
if (mains.length === 0) mains.push(join(ROOT, "dist", "cli", "main.js"));

// Preloaded into each measured process: at exit it writes its own CPU time to a file.
const PRELOAD = `data:text/javascript,${encodeURIComponent(
  'import { writeFileSync } from "node:fs"; process.on("exit", () => { const u = process.cpuUsage(); writeFileSync(process.env.BENCH_CPU_FILE, String((u.user + u.system) / 1000)); });',
)}`;

interface Sample {
  cpuMs: number;
  wallMs: number;
}

/** An existing database: an account, so that `serve` has no first start to make. */
const EXISTING_DATABASE = ["admin", "accounts", "create", "--email", "bench@example.com"];

interface Case {
  name: string;
  commandArgs: string[];
  /** Run first in the same directory, not measured. */
  prepare?: string[];
  untilReady?: (port: number) => Promise<void>;
}

async function measure(MAIN: string, { commandArgs, prepare, untilReady }: Case): Promise<Sample> {
  const dir = mkdtempSync(join(tmpdir(), "bench-startup-"));
  const cpuFile = join(dir, "cpu");
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const env = { ...process.env, BENCH_CPU_FILE: cpuFile, GATEWAY_DATA_DIR: dir, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn" };
  if (prepare) await promisify(execFile)(process.execPath, [MAIN, ...prepare], { cwd: dir, env });
  const started = performance.now();
  const child = spawn(process.execPath, ["--import", PRELOAD, MAIN, ...commandArgs], { cwd: dir, env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let wallMs: number;
  if (untilReady) {
    await untilReady(port);
    wallMs = performance.now() - started;
    child.kill("SIGTERM");
    await exited;
  } else {
    const code = await exited;
    wallMs = performance.now() - started;
    if (code !== 0) throw new Error(`gateway ${commandArgs.join(" ")} exited ${code}: ${stderr}`);
  }
  const cpuMs = Number(readFileSync(cpuFile, "utf8"));
  rmSync(dir, { recursive: true, force: true });
  return { cpuMs, wallMs };
}

async function healthy(port: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error("serve did not answer /healthz within 30 s");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

await promisify(execFile)(process.execPath, [join(ROOT, "scripts", "build-if-stale.mjs"), "--cli-only"], { cwd: ROOT });
const cases: Case[] = [
  { name: "--help", commandArgs: ["--help"] },
  { name: "--version", commandArgs: ["--version"] },
  { name: "admin accounts list (SQLite, existing database)", commandArgs: ["admin", "accounts", "list"], prepare: EXISTING_DATABASE },
  { name: "admin accounts list (SQLite, new database)", commandArgs: ["admin", "accounts", "list"] },
  { name: "serve --workers 1, new database, until /healthz (CPU at exit)", commandArgs: ["serve", "--workers", "1"], untilReady: healthy },
  { name: "serve --workers 1, existing database, until /healthz (CPU at exit)", commandArgs: ["serve", "--workers", "1"], prepare: EXISTING_DATABASE, untilReady: healthy },
];
const range = (values: number[]): string => `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}`;
console.log(`gateway start-up, medians [ranges] of ${runs} runs (CPU = user + system of the process)`);
mains.forEach((main, i) => console.log(`build ${String.fromCharCode(65 + i)}: ${main}`));
console.log(`| command | build | CPU ms | wall ms |${mains.length > 1 ? " CPU / A |" : ""}\n|---|---|---|---|${mains.length > 1 ? "---|" : ""}`);
for (const c of cases) {
  const samples: Sample[][] = mains.map(() => []);
  for (let run = 0; run < runs; run++) {
    const order = mains.map((_, i) => i);
    if (run % 2 === 1) order.reverse();
    for (const i of order) samples[i]!.push(await measure(mains[i]!, c));
  }
  const firstCpu = median(samples[0]!.map((s) => s.cpuMs));
  samples.forEach((built, i) => {
    const cpu = built.map((s) => s.cpuMs);
    const wall = built.map((s) => s.wallMs);
    const ratio = mains.length > 1 ? ` ${(median(cpu) / firstCpu).toFixed(2)}× |` : "";
    console.log(`| ${c.name} | ${String.fromCharCode(65 + i)} | ${median(cpu).toFixed(0)} [${range(cpu)}] | ${median(wall).toFixed(0)} [${range(wall)}] |${ratio}`);
  });
}
