// `npm run bench [-- --quick] [-- --no-peer] [-- --no-postgres] [-- --leak-seconds N] [-- --profile DIR] [-- --out DIR]`
// Starts and stops every process itself on 127.0.0.1 and writes bench/results/latest.{md,json}.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runBench, type BenchOptions } from "./lib/bench.js";
import { stopChildrenOnSignals } from "./lib/procs.js";
import { renderMarkdown, summarizeResults } from "./lib/report.js";

stopChildrenOnSignals();
const args = process.argv.slice(2);
const valueOf = (flag: string) => {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
};
const outDir = resolve(valueOf("--out") ?? join(dirname(fileURLToPath(import.meta.url)), "results"));
const profileDir = valueOf("--profile");
const leakSecondsText = valueOf("--leak-seconds");
const leakSeconds = leakSecondsText === undefined ? undefined : Number(leakSecondsText);
if (leakSeconds !== undefined && !(Number.isInteger(leakSeconds) && leakSeconds >= 10 && leakSeconds <= 3600)) {
  process.stderr.write(`bench: --leak-seconds must be a whole number of seconds from 10 to 3600, got ${leakSecondsText}\n`);
  process.exit(2);
}
const options: BenchOptions = {
  quick: args.includes("--quick"),
  ...(args.includes("--no-peer") && { peer: false }),
  ...(args.includes("--no-postgres") && { postgres: false }),
  ...(profileDir && { profileDir: resolve(profileDir) }),
  ...(leakSeconds !== undefined && { leakSeconds }),
};

// A hard ceiling on the whole run, whatever happens (the phases are bounded on their own).
const ceiling = setTimeout(
  () => {
    process.stderr.write("bench: time limit reached, stopping\n");
    process.kill(process.pid, "SIGTERM");
  },
  (options.quick ? 5 : 15) * 60_000 + (leakSeconds ?? 0) * 1000,
);
ceiling.unref();

const started = Date.now();
try {
  const results = await runBench(options);
  const summary = summarizeResults(results);
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, "latest.json"), `${JSON.stringify({ ...results, summary }, null, 2)}\n`);
  const markdown = renderMarkdown(results, summary);
  writeFileSync(join(outDir, "latest.md"), markdown);
  process.stdout.write(markdown);
  process.stderr.write(`bench: done in ${Math.round((Date.now() - started) / 1000)} s; wrote ${join(outDir, "latest.md")} and latest.json\n`);
  process.exit(0);
} catch (error) {
  process.stderr.write(`bench: failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
}
