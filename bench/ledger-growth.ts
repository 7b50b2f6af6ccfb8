// `node --import tsx bench/ledger-growth.ts [--rows 10000000] [--fill-seconds 210] [--no-postgres | --no-sqlite] [--database postgres://…]`
// The ledger-growth step of `npm run bench` on its own (bench/lib/ledger-growth.ts): fills a ledger
// per database within the time budget and prints the step's Markdown section and targets.
import { renderLedgerGrowth } from "./lib/ledger-growth-report.js";
import { runLedgerGrowth } from "./lib/ledger-growth.js";

const args = process.argv.slice(2);
const valueOf = (flag: string, fallback: string) => {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1]! : fallback;
};
const runs = await runLedgerGrowth({
  rows: Number(valueOf("--rows", "10000000")),
  fillSeconds: Number(valueOf("--fill-seconds", "210")),
  postgresAdminUrl: args.includes("--no-postgres") ? null : valueOf("--database", "postgres://postgres@127.0.0.1:5432/postgres"),
  sqlite: !args.includes("--no-sqlite"),
  log: (line) => process.stderr.write(`${line}\n`),
});
process.stdout.write(`${renderLedgerGrowth(runs).join("\n")}\n`);
