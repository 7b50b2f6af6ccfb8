// The ledger-growth step of `npm run bench` (issue 26 item 3; bench/README.md, "Ledger growth"): per
// database, a ledger filled to `rows` rows (ledger-fill.ts; a busy key holds a tenth of them, within the
// last 30 days) against an empty one, and what a growing ledger must not slow down, in-process (the
// functions behind the routes, without HTTP):
//   - admission + settlement pairs, interleaved on the empty and the filled database (A B A B A B);
//   - /v1/usage for the busy key over the default 30 days (target: p95 < 50 ms at 1M of 10M rows);
//   - the dashboard's usage view of the busy account (30 days) and the administrators' (7 days);
//   - the ledger page, first and deep (cursor), and the CSV export: first page and rows per second.
// Bounded in time: a calibration chunk measures the fill rate, and the rest of the fill is sized to the
// time budget (the rows actually reached are reported; 10M when the machine allows).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StoreBilling } from "../../src/billing/billing-store.js";
import { keyUsage } from "../../src/billing/usage-queries.js";
import { newId } from "../../src/core/ids.js";
import { ledgerCsvLines } from "../../src/dashboard/ledger-csv.js";
import { ledgerPage, usageAcrossAccounts, usageSummary } from "../../src/admin/usage-queries.js";
import { openStore, type Store } from "../../src/store/index.js";
import { createBenchDatabase, dropBenchDatabase } from "./servers.js";
import { pairModel, runPairs, type PairModel } from "./billing-pairs.js";
import { fillLedger } from "./ledger-fill.js";
import { postgresCpuMicros } from "./postgres-cpu.js";

export interface LedgerGrowthOptions {
  rows: number;
  /** PostgreSQL's admin URL (a database is created and dropped per store); null: SQLite only. */
  postgresAdminUrl: string | null;
  /** false: PostgreSQL only (an A/B of the server's settings, say); SQLite is measured by default. */
  sqlite?: boolean;
  /** The fill's time budget per database, seconds. */
  fillSeconds: number;
  pairs?: number;
  log?: (line: string) => void;
}

export interface Timing {
  p50Ms: number;
  p95Ms: number;
}

export interface LedgerGrowthRun {
  database: "SQLite" | "PostgreSQL";
  rowsTarget: number;
  rows: number;
  busyKeyRows: number;
  fillSeconds: number;
  pairUsEmpty: number;
  pairUsFilled: number;
  /** Pairs per second with the filled ledger / with the empty one (≥ 0.9 is the target). */
  throughputRatio: number;
  /** This process's CPU time (user + system) per pair, medians: less disturbed by other tenants of the host than wall time. */
  pairCpuUsEmpty: number;
  pairCpuUsFilled: number;
  /** CPU per pair empty / filled: the same ratio counted in CPU time. */
  cpuRatio: number;
  usage: Timing;
  dashboardUsage: Timing;
  adminUsage: Timing;
  ledgerFirstPage: Timing;
  ledgerDeepPage: Timing;
  csvFirstPageMs: number;
  csvRowsPerSecond: number;
}

const CALIBRATION_ROWS = 100_000;
const MIN_MAIN_ROWS = 100_000;
const CONCURRENCY = 16;
/** Runs of pairs per database, interleaved: 5, as wall times on a shared host spread by ±20% or more. */
const PAIR_REPS = 5;

/** Nearest-rank p50 and p95 of milliseconds. */
function timing(samplesMs: number[]): Timing {
  const sorted = samplesMs.slice().sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
  return { p50Ms: at(0.5), p95Ms: at(0.95) };
}

async function timed(times: number, fn: () => Promise<unknown>): Promise<Timing> {
  for (let i = 0; i < 3; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const began = performance.now();
    await fn();
    samples.push(performance.now() - began);
  }
  return timing(samples);
}

/** Microseconds of wall time and of this process's CPU time per admission + settlement pair, `count` pairs CONCURRENCY at a time. */
async function pairsUs(store: Store, model: PairModel, count: number): Promise<{ wall: number; cpu: number; serverCpu: number | null }> {
  const billing = new StoreBilling(store.handle);
  try {
    const account = await store.accounts.create({ email: `pairs-${newId("x")}@example.com`, tier: "standard", balance: 10n ** 15n });
    const { key } = await store.keys.create({ accountId: account.id });
    const cpuBefore = process.cpuUsage();
    // PostgreSQL's processes too: what the pairs cost inside the server (null on SQLite, in-process).
    const serverBefore = store.dialect === "postgres" ? postgresCpuMicros() : null;
    const began = performance.now();
    await runPairs({ billing, accountId: account.id, keyId: key.id, model }, count, CONCURRENCY);
    const cpu = process.cpuUsage(cpuBefore);
    const serverAfter = serverBefore === null ? null : postgresCpuMicros();
    const serverCpu = serverBefore === null || serverAfter === null ? null : (serverAfter - serverBefore) / count;
    return { wall: ((performance.now() - began) * 1000) / count, cpu: (cpu.user + cpu.system) / count, serverCpu };
  } finally {
    await billing.stopSweeper();
  }
}

async function measureOne(kind: "sqlite" | "postgres", options: LedgerGrowthOptions, dir: string): Promise<LedgerGrowthRun> {
  const log = options.log ?? (() => undefined);
  const database = kind === "sqlite" ? "SQLite" : "PostgreSQL";
  const created: string[] = [];
  /** The database's URL: PostgreSQL's, for the fill's own connection; null on SQLite. */
  const create = async (name: string) => {
    if (kind === "sqlite") return null;
    const made = await createBenchDatabase(options.postgresAdminUrl!, `gw_ledger_${name}`);
    created.push(made.name);
    return made.url;
  };
  const open = (name: string, databaseUrl: string | null) =>
    openStore({ databaseUrl, sqlitePath: join(dir, `${kind}-${name}.db`), secret: "bench-secret-0123456789abcdefghijklmnop" });
  const empty = await open("empty", await create("empty"));
  const filledUrl = await create("filled");
  const filled = await open("filled", filledUrl);
  try {
    // Calibration: a first population of rows, timed, sizes the rest to the budget.
    const budgetEnds = Date.now() + options.fillSeconds * 1000;
    const calibration = await fillLedger(filled, { rows: Math.min(CALIBRATION_ROWS, options.rows), busyKeyRows: 0, otherAccounts: 20, postgresUrl: filledUrl });
    // The calibration's own rows per second, without its set-up and ANALYZE. PostgreSQL's COPY keeps
    // its rate as the ledger grows: 5% kept for the fill's ANALYZE (sized from the whole calibration's
    // time with 10% kept, a fill ended at 108 s of 150). SQLite's rate falls as its indexes grow (18,500
    // rows/s for the calibration, 15,800 over a 2.7M-row fill): 15% kept.
    const perRow = calibration.writeSeconds / calibration.rows;
    const kept = kind === "postgres" ? 0.95 : 0.85;
    const affordable = Math.floor(((budgetEnds - Date.now()) / 1000 / perRow) * kept);
    // At least MIN_MAIN_ROWS (when the target allows): the busy key lives in this second population.
    const rest = Math.min(options.rows - calibration.rows, Math.max(MIN_MAIN_ROWS, affordable));
    const busyKeyRows = Math.floor((calibration.rows + rest) / 10);
    log(`ledger growth, ${database}: ${calibration.rows} rows in ${calibration.seconds.toFixed(1)} s; filling ${rest} more (busy key ${busyKeyRows})`);
    let lastLog = Date.now();
    const fill = await fillLedger(filled, {
      rows: rest,
      postgresUrl: filledUrl,
      busyKeyRows: Math.min(busyKeyRows, rest),
      deadline: budgetEnds + 60_000,
      onProgress: (written, total) => {
        if (Date.now() - lastLog < 10_000) return;
        lastLog = Date.now();
        log(`  ${database}: ${written.toLocaleString("en-US")}/${total.toLocaleString("en-US")} rows`);
      },
    });
    const rows = calibration.rows + fill.rows;
    const fillSeconds = calibration.seconds + fill.seconds;
    log(`ledger growth, ${database}: ${rows.toLocaleString("en-US")} rows in ${fillSeconds.toFixed(0)} s; measuring`);

    const model = pairModel(dir);
    const pairs = options.pairs ?? 3000;
    const emptyRuns: Array<{ wall: number; cpu: number; serverCpu: number | null }> = [];
    const filledRuns: Array<{ wall: number; cpu: number; serverCpu: number | null }> = [];
    await pairsUs(empty, model, 500);
    await pairsUs(filled, model, 500);
    // A B B A A: which database goes first alternates, so a drift of the host does not favour one.
    for (let rep = 0; rep < PAIR_REPS; rep++) {
      if (rep % 2 === 0) {
        emptyRuns.push(await pairsUs(empty, model, pairs));
        filledRuns.push(await pairsUs(filled, model, pairs));
      } else {
        filledRuns.push(await pairsUs(filled, model, pairs));
        emptyRuns.push(await pairsUs(empty, model, pairs));
      }
    }
    const median = (v: number[]) => v.slice().sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
    const pairUsEmpty = median(emptyRuns.map((r) => r.wall));
    const pairUsFilled = median(filledRuns.map((r) => r.wall));
    const pairCpuUsEmpty = median(emptyRuns.map((r) => r.cpu));
    const pairCpuUsFilled = median(filledRuns.map((r) => r.cpu));
    log(
      `ledger growth, ${database}: µs/pair wall empty ${emptyRuns.map((r) => r.wall.toFixed(0)).join(" ")}, filled ${filledRuns.map((r) => r.wall.toFixed(0)).join(" ")}; ` +
        `CPU empty ${emptyRuns.map((r) => r.cpu.toFixed(0)).join(" ")}, filled ${filledRuns.map((r) => r.cpu.toFixed(0)).join(" ")}` +
        (kind === "postgres"
          ? `; server CPU empty ${emptyRuns.map((r) => r.serverCpu?.toFixed(0) ?? "?").join(" ")}, filled ${filledRuns.map((r) => r.serverCpu?.toFixed(0) ?? "?").join(" ")}`
          : ""),
    );

    const db = filled.db;
    const now = fill.now;
    const usage = await timed(40, () => keyUsage(db, fill.busyKeyId, {}, now));
    const dashboardUsage = await timed(20, () => usageSummary(db, { accountId: fill.busyAccountId }, 30, now));
    const adminUsage = await timed(10, () => usageAcrossAccounts(filled, 7, now));
    const ledgerFirstPage = await timed(40, () => ledgerPage(filled, fill.busyAccountId, { limit: 51 }));
    const top = (await ledgerPage(filled, fill.busyAccountId, { limit: 1 }))[0]!.id;
    let cursor = top;
    const ledgerDeepPage = await timed(40, async () => {
      cursor = cursor - BigInt(Math.floor(rows / 50)) > 0n ? cursor - BigInt(Math.floor(rows / 50)) : top;
      return ledgerPage(filled, fill.busyAccountId, { limit: 51, before: cursor });
    });
    const csv = await csvTiming(filled, fill.busyAccountId);
    return {
      database,
      rowsTarget: options.rows,
      rows,
      busyKeyRows: Math.min(busyKeyRows, rest),
      fillSeconds,
      pairUsEmpty,
      pairUsFilled,
      throughputRatio: pairUsEmpty / pairUsFilled,
      pairCpuUsEmpty,
      pairCpuUsFilled,
      cpuRatio: pairCpuUsEmpty / pairCpuUsFilled,
      usage,
      dashboardUsage,
      adminUsage,
      ledgerFirstPage,
      ledgerDeepPage,
      ...csv,
    };
  } finally {
    await empty.close();
    await filled.close();
    for (const name of created) await dropBenchDatabase(options.postgresAdminUrl!, name);
  }
}

/** The CSV of the busy account: time to its first page of rows, then rows per second over up to 5 s. */
async function csvTiming(store: Store, accountId: string): Promise<{ csvFirstPageMs: number; csvRowsPerSecond: number }> {
  const began = performance.now();
  let firstPageMs = Number.NaN;
  let rows = 0;
  for await (const chunk of ledgerCsvLines(store, accountId)) {
    if (chunk.startsWith("id,")) continue;
    if (Number.isNaN(firstPageMs)) firstPageMs = performance.now() - began;
    rows += chunk.split("\r\n").length - 1;
    if (performance.now() - began > 5000) break;
  }
  return { csvFirstPageMs: firstPageMs, csvRowsPerSecond: rows / ((performance.now() - began) / 1000) };
}

export async function runLedgerGrowth(options: LedgerGrowthOptions): Promise<LedgerGrowthRun[]> {
  const dir = mkdtempSync(join(tmpdir(), "gw-ledger-growth-"));
  try {
    const runs: LedgerGrowthRun[] = [];
    if (options.sqlite !== false) runs.push(await measureOne("sqlite", options, dir));
    if (options.postgresAdminUrl) runs.push(await measureOne("postgres", options, dir));
    return runs;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
