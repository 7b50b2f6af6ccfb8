// The soak (issue 43, item 5): mixed traffic at a fixed rate through the built gateway, memory and
// fds sampled, holds and ledger checked at the end (lib/soak/run.ts). Needs `npm run build` first.
//
//   node --import tsx bench/soak.ts [--minutes 30] [--rate 10] [--workers 2] [--database postgres://…] [--out FILE.md]
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { stopChildrenOnSignals } from "./lib/procs.js";
import { renderSoakMarkdown } from "./lib/soak/report.js";
import { runSoak } from "./lib/soak/run.js";

stopChildrenOnSignals();
const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "30" },
    rate: { type: "string", default: "10" },
    workers: { type: "string", default: "2" },
    database: { type: "string" },
    out: { type: "string" },
  },
});
const seconds = Math.round(Number(values.minutes) * 60);
const rate = Number(values.rate);
const workers = Number(values.workers);
if (!(seconds > 0 && rate > 0 && rate <= 1000 && Number.isInteger(workers) && workers >= 1 && workers <= 16)) {
  process.stderr.write("soak: --minutes > 0, --rate 1–1000 and --workers 1–16 are required\n");
  process.exit(2);
}
const result = await runSoak({
  seconds,
  rate,
  workers,
  postgresAdminUrl: values.database ?? null,
  sampleEverySeconds: seconds >= 600 ? 10 : 3,
  // Caches, pools and JIT settle in the first minutes; a short run keeps its last two thirds.
  warmUpSeconds: Math.min(300, Math.round(seconds / 3)),
  log: (line) => process.stderr.write(`${line}\n`),
});
const markdown = renderSoakMarkdown(result);
if (values.out) writeFileSync(values.out, markdown);
process.stdout.write(markdown);
const ok = result.unexpected.length === 0 && result.books.holdsLeft === 0 && result.books.exact;
process.exit(ok ? 0 : 1);
