// `node --import tsx bench/profile.ts [--seconds N] [--mode buffered,stream] [--billing off] [--limits] [--metrics] [--database postgres://…] [--experiment stmt-cache] [--out DIR]`: CPU profile of our
// gateway (SQLite) under wrk load, buffered then streaming; prints the top functions by self time.
// The .cpuprofile files (open them in Chrome DevTools) are left in the output directory.
// `--alloc` adds an allocation profile (where the garbage comes from).
// `--read FILE.cpuprofile` only prints that summary for a profile written elsewhere (bench/latency.ts --cpu-prof).
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { ensureWrk, runWrk, writeWrkScript } from "./load/wrk.js";
import { buildGateway, forkChild, isType, MOCK_SCRIPT, startOurGateway } from "./lib/servers.js";
import { requestBody } from "./lib/constants.js";
import { killAll, stopChild, stopChildrenOnSignals, waitForMessage } from "./lib/procs.js";

stopChildrenOnSignals();
const args = process.argv.slice(2);
const valueOf = (flag: string) => {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
};
const seconds = Number(valueOf("--seconds") ?? "8");
const billing = valueOf("--billing") ?? "on";
const outDir = resolve(valueOf("--out") ?? "/tmp/gw-bench-profile");
const database = valueOf("--database") ?? "";
const experiment = valueOf("--experiment") ?? "";
const readOnly = valueOf("--read");
const modes = (valueOf("--mode") ?? "buffered,stream").split(",");
// --alloc: also sample every allocation (collected ones too) and print where the bytes come from.
const allocFile = args.includes("--alloc") ? join(outDir, "alloc.heapprofile") : "";

if (!readOnly) await profileUnderLoad();

async function profileUnderLoad(): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  for (const f of readdirSync(outDir)) if (f.endsWith(".cpuprofile")) rmSync(join(outDir, f));
  const wrk = ensureWrk({ install: true });
  if (!wrk.ok) throw new Error(wrk.reason);
  buildGateway();
  try {
    const mock = forkChild("mock", MOCK_SCRIPT, {});
    const mockPort = (await waitForMessage(mock, isType<{ type: "ready"; port: number }>("ready"), 30_000)).port;
    const {
      child: gateway,
      url,
      headers,
    } = await startOurGateway("gateway", {
      mockUrl: `http://127.0.0.1:${mockPort}`,
      billing: billing === "off" ? "off" : "on",
      limits: args.includes("--limits") ? "on" : "off",
      databaseUrl: database,
      nodeFlags: ["--cpu-prof", `--cpu-prof-dir=${outDir}`],
      env: { BENCH_EXPERIMENT: experiment, BENCH_ALLOC_PROFILE: allocFile, ...(args.includes("--metrics") && { BENCH_METRICS: "on" }) },
    });
    for (const stream of modes.map((m) => m === "stream")) {
      const result = await runWrk(url, writeWrkScript(requestBody(stream), headers), { connections: 50, threads: 1, durationS: seconds });
      process.stdout.write(`${stream ? "stream" : "buffered"}: ${Math.round(result.rps)} req/s, ${result.non2xx} non-2xx, ${result.errors} errors\n`);
    }
    await stopChild(gateway, 20_000);
    await stopChild(mock);
  } finally {
    await killAll();
  }
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
// The largest file is the main thread's (in case a worker thread wrote one too).
const largest = readOnly
  ? undefined
  : readdirSync(outDir)
      .filter((f) => f.endsWith(".cpuprofile"))
      .map((f) => ({ f, size: statSync(join(outDir, f)).size }))
      .sort((a, b) => b.size - a.size)[0]?.f;
const file = readOnly ? resolve(readOnly) : largest && join(outDir, largest);
if (!file) throw new Error(`no .cpuprofile in ${outDir}`);
const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: ProfileNode[] };
const self = new Map<string, number>();
let total = 0;
for (const node of profile.nodes) {
  const hits = node.hitCount ?? 0;
  total += hits;
  const where = node.callFrame.url.replace(/^.*\/(node_modules|src)\//, "$1/").replace(/^file:\/\//, "");
  const key = `${node.callFrame.functionName || "(anonymous)"} ${where}:${node.callFrame.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + hits);
}
// Self time grouped by package / source area as well.
const byArea = new Map<string, number>();
for (const [key, hits] of self) {
  const where = key.split(" ").slice(1).join(" ");
  const area = where.startsWith("node_modules/")
    ? where
        .split("/")
        .slice(0, where.startsWith("node_modules/@") ? 3 : 2)
        .join("/")
    : where.startsWith("src/")
      ? where.split("/").slice(0, 2).join("/")
      : where.startsWith("node:")
        ? "node: internals"
        : key.split(" ")[0]!;
  byArea.set(area, (byArea.get(area) ?? 0) + hits);
}
if (allocFile) printAllocations(allocFile);

interface AllocNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: AllocNode[];
}
function printAllocations(file: string): void {
  const { head } = JSON.parse(readFileSync(file, "utf8")) as { head: AllocNode };
  const bytes = new Map<string, number>();
  let all = 0;
  const visit = (node: AllocNode) => {
    const where = node.callFrame.url.replace(/^.*\/(node_modules|src)\//, "$1/").replace(/^file:\/\//, "");
    const key = `${node.callFrame.functionName || "(anonymous)"} ${where}:${node.callFrame.lineNumber + 1}`;
    bytes.set(key, (bytes.get(key) ?? 0) + node.selfSize);
    all += node.selfSize;
    for (const child of node.children) visit(child);
  };
  visit(head);
  process.stdout.write(`\nAllocations (sampled, ${(all / 2 ** 20).toFixed(0)} MiB in all), top 30 by bytes:\n`);
  for (const [key, n] of [...bytes].sort((a, b) => b[1] - a[1]).slice(0, 30)) process.stdout.write(`  ${((100 * n) / all).toFixed(1).padStart(5)}%  ${key}\n`);
}

const pct = (n: number) => `${((100 * n) / total).toFixed(1)}%`;
process.stdout.write(`\nprofile ${file}\n\nTop functions by self time:\n`);
for (const [key, hits] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) process.stdout.write(`  ${pct(hits).padStart(6)}  ${key}\n`);
process.stdout.write("\nBy area:\n");
for (const [area, hits] of [...byArea].sort((a, b) => b[1] - a[1]).slice(0, 25)) process.stdout.write(`  ${pct(hits).padStart(6)}  ${area}\n`);
process.exit(0);
