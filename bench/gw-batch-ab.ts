// `node --import tsx bench/gw-batch-ab.ts --database postgres://… [--rounds 4] [--batches 100] [--batch 50] [--limits on|off|both] [--turn N] [--fill ROWS] [FILE.sql …]`
// What one gw_batch call costs inside PostgreSQL, A/B between definitions of the function and with
// the rate limits on or off (issue 23, 26). A fresh database is created (and dropped); each variant
// is gw_batch as this checkout defines it ("current") or the `create or replace function gw_batch`
// of a FILE, installed under its own name. Each round runs every (variant, limits) subject in turn,
// the order alternating, each `--batches` calls of `--batch` operations: half admissions of new holds,
// half settlements of the holds its previous call admitted (as under load: one busy account and key).
// Each round runs `--batches` calls of every subject.
// Measured per operation: each call's wall time, with synchronous_commit off on this connection (the
// function's work, not the WAL flush's disk wait); subjects alternate call by call. Prints medians and
// each subject's ratio to the first one's calls next to it. `--function-stats on`: also
// every function's total and self time per operation over the whole run (track_functions = all).
import { readFileSync } from "node:fs";
import pg from "pg";
import { LEDGER_DIMENSION_COLUMNS } from "../src/core/dimensions.js";
import { periodStarts } from "../src/billing/key-period.js";
import { limitsField } from "../src/billing/admission-postgres.js";
import { pgPeriods, type PgField, type PgOperation } from "../src/billing/postgres-batcher.js";
import { applicableLimits, limitSubjectsOf, subjectLimitsFromInput, tierLimitsOf } from "../src/core/traffic-limits.js";
import { monthOf, newId, newRequestId } from "../src/core/ids.js";
import { GW_BATCH } from "../src/store/gw-batch-function.js";
import { openStore } from "../src/store/index.js";
import { fillLedger } from "./lib/ledger-fill.js";
import { createBenchDatabase, dropBenchDatabase } from "./lib/servers.js";
import { median } from "./lib/stats.js";

const args = process.argv.slice(2);
const flags = new Map<string, string>();
const files: string[] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i]!.startsWith("--")) flags.set(args[i]!, args[++i]!);
  else files.push(args[i]!);
}
const adminUrl = flags.get("--database");
if (!adminUrl) throw new Error("usage: --database postgres://… [options] [FILE.sql …]");
const rounds = Number(flags.get("--rounds") ?? 4);
const batches = Number(flags.get("--batches") ?? 100);
const batchSize = Number(flags.get("--batch") ?? 50);
const limitsModes = { on: [true], off: [false], both: [false, true] }[flags.get("--limits") ?? "both"];
if (!limitsModes || !(batchSize >= 2 && batchSize % 2 === 0)) throw new Error("--limits on|off|both; --batch an even number");
const NEVER_REFUSING = subjectLimitsFromInput({ requests_per_minute: 1_000_000_000, tokens_per_minute: 1_000_000_000_000_000, concurrent_requests: 1_000_000 });

// A FILE may also (or only) redefine other functions, trigger functions included: those are global,
// so such a variant's definitions are applied before each of its turns, and the original definitions
// (read back from the database) before each turn of the others; use --turn N to run N calls a turn.
const variants = [{ name: "current", sql: GW_BATCH }, ...files.map((f) => ({ name: f, sql: readFileSync(f, "utf8") }))].map((v, i) => {
  const sql = v.sql.replace(/create or replace function gw_batch\(/, `create or replace function gw_batch_ab${i}(`);
  const renamed = sql !== v.sql || i === 0;
  const globals = [...sql.matchAll(/create or replace function (\w+)\(/g)].map((m) => m[1]!).filter((name) => !name.startsWith("gw_batch_ab"));
  return { ...v, fn: renamed ? `gw_batch_ab${i}` : "gw_batch_ab0", sql, globals };
});
const overridden = [...new Set(variants.flatMap((v) => v.globals))];
const turn = Number(flags.get("--turn") ?? (overridden.length > 0 ? 20 : 1));

const database = await createBenchDatabase(adminUrl, "gw_batch_ab");
const store = await openStore({ databaseUrl: database.url, sqlitePath: "", secret: "bench-secret-0123456789abcdefghijklmnop" });
// --fill N: a ledger of N valid, chained rows first (lib/ledger-fill.ts), to see what grows with it.
const fillRows = Number(flags.get("--fill") ?? 0);
if (fillRows > 0) {
  const fill = await fillLedger(store, { rows: fillRows, busyKeyRows: Math.floor(fillRows / 10), postgresUrl: database.url });
  process.stderr.write(`  filled ${fill.rows} ledger rows in ${fill.seconds.toFixed(0)} s\n`);
}
const client = new pg.Client({ connectionString: database.url });
try {
  await client.connect();
  // The function's own cost is measured, not the commit's WAL flush (a disk wait that varies by itself).
  await client.query("set synchronous_commit = off");
  for (const v of variants) if (v.globals.length === 0) await client.query(v.sql);
  // The definitions the files override, as this checkout made them, to restore before the others' turns.
  const originals: string[] = [];
  for (const name of overridden) originals.push((await client.query<{ def: string }>("select pg_get_functiondef(to_regproc($1)) as def", [name])).rows[0]!.def);
  let applied: (typeof variants)[number] | null = null;
  const applyFor = async (variant: (typeof variants)[number]): Promise<void> => {
    if (overridden.length === 0 || applied === variant) return;
    for (const def of originals) await client.query(def);
    if (variant.globals.length > 0) await client.query(variant.sql);
    applied = variant;
  };
  const functionStats = flags.get("--function-stats") === "on";
  if (functionStats) await client.query("set track_functions = 'all'");

  const subjects = await Promise.all(
    variants.flatMap((variant) =>
      limitsModes.map(async (limitsOn) => {
        // Each subject its own account and key: its batches lock and count only its own rows.
        const account = await store.accounts.create({ email: `${newId("ab")}@example.com`, tier: "standard", balance: 900_000n * 10n ** 9n });
        const { key } = await store.keys.create({ accountId: account.id });
        const limits = limitsOn
          ? limitsField(
              applicableLimits(
                tierLimitsOf(undefined),
                limitSubjectsOf({ key: { id: key.id, limits: NEVER_REFUSING }, account: { id: account.id, limits: NEVER_REFUSING } }),
                "ab-model",
              ),
            )
          : null;
        return {
          label: `${variant.name}, limits ${limitsOn ? "on" : "off"}`,
          variant,
          fn: variant.fn,
          accountId: account.id,
          keyId: key.id,
          limits,
          open: [] as { hold: string; request: string }[],
          wall: [] as number[],
        };
      }),
    ),
  );
  type Subject = (typeof subjects)[number];

  const call = async (s: Subject): Promise<void> => {
    const now = Date.now();
    const periods = periodStarts(now);
    const month = monthOf(now);
    const ops: PgOperation[] = [];
    // The oldest open holds, half a batch: every call (after the first) settles as many as it admits.
    for (const { hold, request } of s.open.splice(0, batchSize / 2)) {
      const row: Record<string, PgField> = {
        model: "ab-model",
        provider: "mock",
        route: "chat",
        input_tokens: "200",
        cached_tokens: "0",
        output_tokens: "100",
        reasoning_tokens: "0",
        estimated: "0",
        deployment: null,
        attempts: "1",
      };
      // Some dimensions non-zero, as a settlement's are (each one present adds to the row's hash); zeros left out, as settlement does.
      LEDGER_DIMENSION_COLUMNS.forEach((column, i) => {
        if (i % 3 === 0) row[column] = "1000";
      });
      ops.push({
        k: "settle",
        hold,
        account: s.accountId,
        key: s.keyId,
        request,
        cost: "1234567",
        tokens: "300",
        now: String(now),
        month,
        periods: pgPeriods(periods),
        row,
      });
    }
    const admitted: { hold: string; request: string }[] = [];
    while (ops.length < batchSize) {
      const hold = newId("hold");
      const request = newRequestId();
      admitted.push({ hold, request });
      ops.push({
        k: "admit",
        account: s.accountId,
        key: s.keyId,
        request,
        hold,
        amount: "5000000",
        tokens: "1300",
        month,
        now: String(now),
        expires: String(now + 600_000),
        periods: pgPeriods(periods),
        ...(s.limits !== null && { limits: s.limits }),
      });
    }
    s.open.push(...admitted);
    const result = await client.query<{ answers: { outcome?: string; recorded?: boolean }[] }>(`select ${s.fn}($1::jsonb) as answers`, [JSON.stringify(ops)]);
    const bad = result.rows[0]!.answers.find((answer) => (answer.outcome !== undefined ? answer.outcome !== "ok" : answer.recorded !== true));
    if (bad) throw new Error(`${s.label}: gw_batch answered ${JSON.stringify(bad)}`);
  };

  for (const s of subjects) {
    await applyFor(s.variant);
    for (let i = 0; i < 20; i++) await call(s); // warm-up: plans and caches
  }
  // Subjects take turns of `turn` calls (the order reversed every other turn), so that the host's
  // drifts reach every subject alike; each call is timed on its own. After a variant's definitions
  // were applied, its first calls (plans made again) are not measured.
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < batches; i += turn) {
      const order = (i / turn) % 2 === 0 ? subjects : [...subjects].reverse();
      for (const s of order) {
        if (applied !== s.variant && overridden.length > 0) {
          await applyFor(s.variant);
          for (let w = 0; w < 3; w++) await call(s);
        }
        for (let j = i; j < Math.min(i + turn, batches); j++) {
          const started = process.hrtime.bigint();
          await call(s);
          s.wall.push(Number(process.hrtime.bigint() - started) / 1000 / batchSize);
        }
      }
    }
    process.stderr.write(`  round ${round + 1}/${rounds}\n`);
  }
  console.log(
    `gw_batch, ${rounds} × ${batches} calls of ${batchSize} operations (half admissions, half settlements) per subject, in turns of ${turn} call(s); µs per operation (wall, the commit not flushed)`,
  );
  const base = subjects[0]!;
  const q = (values: number[], p: number) => [...values].sort((x, y) => x - y)[Math.floor(p * (values.length - 1))]!;
  for (const s of subjects) {
    // The ratio of each call to the base subject's call next to it: paired, so drifts cancel.
    const ratios = s.wall.map((x, i) => x / base.wall[i]!);
    const versus = s === base ? "" : `; / ${base.label}: median ${median(ratios).toFixed(3)}× (IQR ${q(ratios, 0.25).toFixed(3)}–${q(ratios, 0.75).toFixed(3)})`;
    console.log(`${s.label}: median ${median(s.wall).toFixed(1)} (IQR ${q(s.wall, 0.25).toFixed(1)}–${q(s.wall, 0.75).toFixed(1)})${versus}`);
  }
  if (functionStats) {
    await client.end(); // a backend's function statistics are flushed when it ends
    const reader = new pg.Client({ connectionString: database.url });
    await reader.connect();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const operations = (20 + rounds * batches) * batchSize * subjects.length;
    const stats = await reader.query<{ funcname: string; calls: string; total_time: number; self_time: number }>(
      "select funcname, calls, total_time, self_time from pg_stat_user_functions order by self_time desc",
    );
    console.log("functions, all subjects together (µs per operation): total, self; calls");
    for (const row of stats.rows)
      console.log(`  ${row.funcname}: ${((row.total_time * 1000) / operations).toFixed(1)}, ${((row.self_time * 1000) / operations).toFixed(1)}; ${row.calls}`);
    await reader.end();
  }
} finally {
  await client.end().catch(() => undefined);
  await store.close();
  await dropBenchDatabase(adminUrl, database.name);
}
