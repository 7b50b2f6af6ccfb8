// `node --import tsx bench/startup.ts [--runs 5]`: what the built `gateway` command costs to start, as
// CPU (user + system, the process's own accounting read at its exit, so a busy machine shows as wall
// time, not CPU) and wall time, medians of --runs: `--help`, `--version`, an admin command on a fresh
// SQLite database, and `serve --workers 1` until GET /healthz answers. Builds dist/ first when stale.
// Targets: --help, --version and admin commands ~150 ms of CPU; a worker ready within 1 s.
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { median } from "./lib/stats.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const MAIN = join(ROOT, "dist", "cli", "main.js");
const args = process.argv.slice(2);
const runs = Number(args[args.indexOf("--runs") + 1] ?? 5) || 5;

// Preloaded into each measured process: at exit it writes its own CPU time to a file.
const PRELOAD = `data:text/javascript,${encodeURIComponent(
  'import { writeFileSync } from "node:fs"; process.on("exit", () => { const u = process.cpuUsage(); writeFileSync(process.env.BENCH_CPU_FILE, String((u.user + u.system) / 1000)); });',
)}`;

interface Sample {
  cpuMs: number;
  wallMs: number;
}

async function measure(commandArgs: string[], env: Record<string, string>, untilReady?: (port: number) => Promise<void>): Promise<Sample> {
  const dir = mkdtempSync(join(tmpdir(), "bench-startup-"));
  const cpuFile = join(dir, "cpu");
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const started = performance.now();
  const child = spawn(process.execPath, ["--import", PRELOAD, MAIN, ...commandArgs], {
    cwd: dir,
    env: { ...process.env, ...env, BENCH_CPU_FILE: cpuFile, GATEWAY_DATA_DIR: dir, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "pipe"],
  });
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

await promisify(execFile)(process.execPath, [join(ROOT, "scripts", "build-if-stale.mjs")], { cwd: ROOT });
const cases: Array<[string, string[], ((port: number) => Promise<void>) | undefined]> = [
  ["--help", ["--help"], undefined],
  ["--version", ["--version"], undefined],
  ["admin accounts list (SQLite)", ["admin", "accounts", "list"], undefined],
  ["serve --workers 1, until /healthz (CPU at exit)", ["serve", "--workers", "1"], healthy],
];
console.log(`gateway start-up, medians of ${runs} runs (CPU = user + system of the process)`);
console.log("| command | CPU ms | wall ms |\n|---|---|---|");
for (const [name, commandArgs, untilReady] of cases) {
  const samples: Sample[] = [];
  for (let i = 0; i < runs; i++) samples.push(await measure(commandArgs, {}, untilReady));
  const cpu = median(samples.map((s) => s.cpuMs));
  const wall = median(samples.map((s) => s.wallMs));
  console.log(`| ${name} | ${cpu.toFixed(0)} | ${wall.toFixed(0)} |`);
}
