// `node --import tsx bench/ledger-fill-file.ts FILE [--rows 2800000]`
// Fills a SQLite file with a ledger the way the ledger-growth step does (bench/lib/ledger-growth.ts:
// 100,000 rows over 20 accounts, then the rest with a busy key holding a tenth of them) and leaves it,
// checkpointed, for A/B runs that reuse one fill (bench/ledger-insert-ab.ts): the fill is the slow part.
import { fillLedger } from "./lib/ledger-fill.js";
import { openStore } from "../src/store/index.js";

const args = process.argv.slice(2);
const path = args[0];
if (!path || path.startsWith("--")) throw new Error("usage: ledger-fill-file.ts FILE [--rows N]");
const rowsAt = args.indexOf("--rows");
const rows = rowsAt >= 0 ? Number(args[rowsAt + 1]) : 2_800_000;
const store = await openStore({ databaseUrl: null, sqlitePath: path, secret: "bench-secret-0123456789abcdefghijklmnop" });
try {
  const first = await fillLedger(store, { rows: Math.min(100_000, rows), busyKeyRows: 0, otherAccounts: 20 });
  let lastLog = Date.now();
  const rest = await fillLedger(store, {
    rows: rows - first.rows,
    busyKeyRows: Math.floor(rows / 10),
    onProgress: (written, total) => {
      if (Date.now() - lastLog < 10_000) return;
      lastLog = Date.now();
      process.stderr.write(`${written.toLocaleString("en-US")}/${total.toLocaleString("en-US")} rows\n`);
    },
  });
  process.stderr.write(`${(first.rows + rest.rows).toLocaleString("en-US")} rows in ${(first.seconds + rest.seconds).toFixed(0)} s: ${path}\n`);
  store.handle.sqlite!.pragma("wal_checkpoint(TRUNCATE)");
} finally {
  await store.close();
}
