// Closed-loop maximum throughput with wrk (its own process): a generated Lua script sets the POST
// body and headers and prints a JSON summary from done(). wrk comes from the Debian package.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startChild } from "../lib/procs.js";

export interface WrkResult {
  requests: number;
  durationS: number;
  rps: number;
  non2xx: number;
  errors: number;
  /** Latency percentiles from wrk, µs (closed loop: not comparable with the open-loop figures). */
  p50: number;
  p99: number;
}

function luaString(text: string): string {
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

export function writeWrkScript(body: string, headers: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "gw-bench-wrk-"));
  const path = join(dir, "post.lua");
  const lines = [
    'wrk.method = "POST"',
    `wrk.body = ${luaString(body)}`,
    ...Object.entries(headers).map(([name, value]) => `wrk.headers[${luaString(name)}] = ${luaString(value)}`),
    "function done(summary, latency, requests)",
    "  local e = summary.errors",
    '  io.write(string.format("WRKJSON {\\"requests\\":%d,\\"duration_us\\":%d,\\"status\\":%d,\\"connect\\":%d,\\"read\\":%d,\\"write\\":%d,\\"timeout\\":%d,\\"p50\\":%d,\\"p99\\":%d}\\n",',
    "    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout, latency:percentile(50), latency:percentile(99)))",
    "end",
  ];
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

/** Finds wrk; installs the Debian package when missing and possible; otherwise explains. */
export function ensureWrk(options: { install: boolean }): { ok: true; version: string } | { ok: false; reason: string } {
  const probe = () => spawnSync("wrk", ["--version"], { encoding: "utf8" });
  let result = probe();
  if (result.error && options.install) {
    const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
    const hasApt = spawnSync("apt-get", ["--version"]).status === 0;
    if (isRoot && hasApt) {
      process.stderr.write("bench: wrk not found; installing the Debian package (apt-get install -y wrk)\n");
      try {
        execFileSync("apt-get", ["install", "-y", "wrk"], { stdio: "ignore", timeout: 180_000 });
      } catch {
        execFileSync("apt-get", ["update"], { stdio: "ignore", timeout: 180_000 });
        execFileSync("apt-get", ["install", "-y", "wrk"], { stdio: "ignore", timeout: 180_000 });
      }
      result = probe();
    }
  }
  if (result.error) return { ok: false, reason: "wrk is not installed and could not be installed here. Install it with `apt-get install wrk` (Debian/Ubuntu) and run again." };
  return { ok: true, version: `${result.stdout}${result.stderr}`.split("\n")[0]!.trim() };
}

export async function runWrk(url: string, script: string, options: { connections: number; threads: number; durationS: number }): Promise<WrkResult> {
  const child = startChild("wrk", "wrk", [`-t${options.threads}`, `-c${options.connections}`, `-d${options.durationS}s`, "--timeout", "10s", "-s", script, url]);
  let out = "";
  child.proc.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
  const killer = setTimeout(() => child.proc.kill("SIGKILL"), (options.durationS + 30) * 1000);
  const code = await child.exited;
  clearTimeout(killer);
  const line = out.split("\n").find((l) => l.startsWith("WRKJSON "));
  if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}): ${child.tail()}`);
  const j = JSON.parse(line.slice(8)) as Record<string, number>;
  const durationS = j.duration_us! / 1e6;
  return {
    requests: j.requests!,
    durationS,
    rps: j.requests! / durationS,
    non2xx: j.status!,
    errors: j.connect! + j.read! + j.write! + j.timeout!,
    p50: j.p50!,
    p99: j.p99!,
  };
}
