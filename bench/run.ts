// `npm run bench [-- --quick] [-- --no-peer] [-- --no-postgres] [-- --leak-seconds N] [-- --profile DIR] [-- --out DIR]
//   [-- --no-ledger-growth] [-- --ledger-rows N] [-- --ledger-fill-seconds S] [-- --paired-only] [-- --paired-slices N] [-- --paired-seconds S]`
// Starts and stops every process itself on 127.0.0.1 and writes bench/results/latest.{md,json}.
// The ledger-growth step (bench/lib/ledger-growth.ts) runs last, except with --quick or --no-ledger-growth:
// up to 10M ledger rows per database, filled within --ledger-fill-seconds (210) each.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runBench, type BenchOptions } from "./lib/bench.js";
import { stopChildrenOnSignals } from "./lib/procs.js";
import { ledgerGrowthVerdicts, renderLedgerGrowth } from "./lib/ledger-growth-report.js";
import { runLedgerGrowth, type LedgerGrowthRun } from "./lib/ledger-growth.js";
import { PAIRED_COMPARISONS } from "./lib/paired.js";
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
// The paired A/B phase (lib/paired.ts): --paired-only skips the latency, throughput and leak phases.
const pairedSlicesText = valueOf("--paired-slices");
const pairedSecondsText = valueOf("--paired-seconds");
const pairedSlices = pairedSlicesText === undefined ? undefined : Number(pairedSlicesText);
const pairedSeconds = pairedSecondsText === undefined ? undefined : Number(pairedSecondsText);
if (
  (pairedSlices !== undefined && !(Number.isInteger(pairedSlices) && pairedSlices >= 2 && pairedSlices <= 60 && pairedSlices % 2 === 0)) ||
  (pairedSeconds !== undefined && !(Number.isInteger(pairedSeconds) && pairedSeconds >= 1 && pairedSeconds <= 30))
) {
  process.stderr.write("bench: --paired-slices must be an even whole number from 2 to 60, --paired-seconds a whole number from 1 to 30\n");
  process.exit(2);
}
const options: BenchOptions = {
  quick: args.includes("--quick"),
  ...(args.includes("--no-peer") && { peer: false }),
  ...(args.includes("--no-postgres") && { postgres: false }),
  ...(profileDir && { profileDir: resolve(profileDir) }),
  ...(leakSeconds !== undefined && { leakSeconds }),
  ...(args.includes("--paired-only") && { pairedOnly: true }),
  ...(pairedSlices !== undefined && { pairedSlices }),
  ...(pairedSeconds !== undefined && { pairedSeconds }),
};

const ledgerGrowth = !options.quick && !options.pairedOnly && !args.includes("--no-ledger-growth");
const ledgerRows = Number(valueOf("--ledger-rows") ?? 10_000_000);
const ledgerFillSeconds = Number(valueOf("--ledger-fill-seconds") ?? 210);
if (!(Number.isInteger(ledgerRows) && ledgerRows >= 100_000) || !(ledgerFillSeconds >= 10 && ledgerFillSeconds <= 3600)) {
  process.stderr.write("bench: --ledger-rows must be a whole number from 100000, --ledger-fill-seconds from 10 to 3600\n");
  process.exit(2);
}
// Per database: the fill's budget, its last chunk's overrun and the measurements.
const ledgerGrowthSeconds = ledgerGrowth ? (options.postgres === false ? 1 : 2) * (ledgerFillSeconds + 150) : 0;

// Paired slices beyond the plan's (--paired-slices/--paired-seconds): each comparison's, plus a second per slice.
const pairedExtraSeconds = pairedSlices !== undefined || pairedSeconds !== undefined ? PAIRED_COMPARISONS.length * (pairedSlices ?? 12) * ((pairedSeconds ?? 2) + 1) : 0;
// A hard ceiling on the whole run, whatever happens (the phases are bounded on their own).
const ceiling = setTimeout(
  () => {
    process.stderr.write("bench: time limit reached, stopping\n");
    process.kill(process.pid, "SIGTERM");
  },
  (options.quick ? 5 : 15) * 60_000 + (leakSeconds ?? 0) * 1000 + ledgerGrowthSeconds * 1000 + pairedExtraSeconds * 1000,
);
ceiling.unref();

const started = Date.now();
try {
  const results = await runBench(options);
  let growth: LedgerGrowthRun[] = [];
  if (ledgerGrowth) {
    growth = await runLedgerGrowth({
      rows: ledgerRows,
      fillSeconds: ledgerFillSeconds,
      postgresAdminUrl: results.meta.postgres ? (process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres") : null,
      log: (line) => process.stderr.write(`bench: ${line}\n`),
    });
  }
  const summary = summarizeResults(results);
  summary.verdicts.push(...ledgerGrowthVerdicts(growth));
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, "latest.json"), `${JSON.stringify({ ...results, ledgerGrowth: growth, summary }, null, 2)}\n`);
  const markdown = [renderMarkdown(results, summary), ...renderLedgerGrowth(growth)].join("\n");
  writeFileSync(join(outDir, "latest.md"), markdown);
  process.stdout.write(markdown);
  process.stderr.write(`bench: done in ${Math.round((Date.now() - started) / 1000)} s; wrote ${join(outDir, "latest.md")} and latest.json\n`);
  process.exit(0);
} catch (error) {
  process.stderr.write(`bench: failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
}
