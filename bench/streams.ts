// Open streams (issue 43, item 4): N concurrent streams, one token every 100 ms for 60 s, through
// one gateway process, ours and Portkey's, against the paced mock directly (lib/streams/run.ts).
// Needs `npm run build` first (our gateway runs as `npm start` does). Raises the open-file limits of
// its own processes with prlimit (lib/streams/file-limits.ts), not the gateway's defaults.
//
//   node --import tsx bench/streams.ts [--streams 10000] [--seconds 60] [--interval-ms 100]
//     [--ramp-seconds 20] [--clients 2] [--targets direct,ours,peer] [--out FILE.md] [--json FILE.json]
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { stopChildrenOnSignals } from "./lib/procs.js";
import { renderStreamsMarkdown } from "./lib/streams/report.js";
import { runStreams } from "./lib/streams/run.js";
import type { StreamsTargetName } from "./lib/streams/targets.js";

stopChildrenOnSignals();
const { values } = parseArgs({
  options: {
    streams: { type: "string", default: "10000" },
    seconds: { type: "string", default: "60" },
    "interval-ms": { type: "string", default: "100" },
    "ramp-seconds": { type: "string", default: "20" },
    clients: { type: "string", default: "2" },
    targets: { type: "string", default: "direct,ours,peer" },
    out: { type: "string" },
    json: { type: "string" },
  },
});
const streams = Number(values.streams);
const seconds = Number(values.seconds);
const intervalMs = Number(values["interval-ms"]);
const rampSeconds = Number(values["ramp-seconds"]);
const clients = Number(values.clients);
const targets = values.targets.split(",").filter(Boolean) as StreamsTargetName[];
const valid =
  Number.isInteger(streams) &&
  streams >= 1 &&
  seconds > 0 &&
  intervalMs >= 10 &&
  rampSeconds >= 0 &&
  rampSeconds < seconds &&
  Number.isInteger(clients) &&
  clients >= 1 &&
  clients <= 16 &&
  targets.length > 0 &&
  targets.every((t) => ["direct", "ours", "peer"].includes(t));
if (!valid) {
  process.stderr.write("streams: --streams ≥ 1, --seconds > --ramp-seconds ≥ 0, --interval-ms ≥ 10, --clients 1–16, --targets of direct,ours,peer\n");
  process.exit(2);
}
const result = await runStreams({ streams, seconds, intervalMs, rampSeconds, clients, targets, log: (line) => process.stderr.write(`${line}\n`) });
const markdown = renderStreamsMarkdown(result);
if (values.out) writeFileSync(values.out, markdown);
if (values.json)
  writeFileSync(
    values.json,
    JSON.stringify(result, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value), 2),
  );
process.stdout.write(markdown);
