// `node --import tsx bench/ledger-insert-ab.ts --filled FILE [--rounds 5] [--rows 4000] [--accounts one|many] [--cache-kb 2000] VARIANT…`
// What one ledger INSERT costs on SQLite, and which part of it grows with the ledger (ADR 0027,
// amendment; bench/results/history/2026-11-25T0440-sqlite-pairs-filled-ledger.md). FILE is a filled ledger (e.g. left
// by `bench/ledger-fill-file.ts`); per VARIANT it is copied, the variant's SQL applied to the copy and
// to a fresh empty database ("base": nothing; e.g. "drop index ledger_key_time", "drop trigger
// ledger_usage_rollup", "pragma cache_size = -65536"; several separated by ";"), then rounds of
// settlement's INSERT (hash computed beforehand, as settlement does; the account's ledger_head
// updated; 16 rows a transaction) run on each, all interleaved, which goes first alternating. Prints
// this process's CPU µs per row (user + system; system apart), medians and every round. `--accounts
// many`: each row for a random one of at least 100 accounts (each row on another page of every
// per-account index, as with real traffic); `one`: a single new account (the pairs' shape).
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import type SqliteDatabase from "better-sqlite3";
import { LEDGER_DIMENSION_COLUMNS } from "../src/core/dimensions.js";
import { newRequestId, randomText } from "../src/core/ids.js";
import { openStore, type Store } from "../src/store/index.js";
import { LEDGER_CHAIN_COLUMNS, ledgerRowHashFromValues } from "../src/store/ledger-chain.js";

const args = process.argv.slice(2);
const flags = new Map<string, string>();
const variants: string[] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i]!.startsWith("--")) flags.set(args[i]!, args[++i]!);
  else variants.push(args[i]!);
}
const filledPath = flags.get("--filled");
if (!filledPath || variants.length === 0) throw new Error("usage: --filled FILE [options] VARIANT…");
const rounds = Number(flags.get("--rounds") ?? 5);
const rowsPerRound = Number(flags.get("--rows") ?? 4000);
const manyAccounts = (flags.get("--accounts") ?? "many") === "many";
const cacheKb = Number(flags.get("--cache-kb") ?? 2000);
const ROWS_PER_TRANSACTION = 16;
const SECRET = "bench-secret-0123456789abcdefghijklmnop";

interface Subject {
  store: Store;
  owners: Array<{ account: string; key: string }>;
  heads: Map<string, string | null>;
}

async function newOwner(store: Store, label: string) {
  const account = await store.accounts.create({ email: `${label}-${randomText(6, "hex")}@example.com`, tier: "standard", balance: 10n ** 15n });
  const { key } = await store.keys.create({ accountId: account.id });
  return { account: account.id, key: key.id };
}

async function subject(path: string, variant: string): Promise<Subject> {
  const store = await openStore({ databaseUrl: null, sqlitePath: path, secret: SECRET });
  const sqlite = store.handle.sqlite!;
  sqlite.pragma(`cache_size = -${cacheKb}`);
  if (variant !== "base") for (const statement of variant.split(";")) sqlite.exec(statement);
  sqlite.pragma("wal_checkpoint(TRUNCATE)");
  let owners = manyAccounts ? sqlite.prepare<[], { account: string; key: string }>("select account_id as account, id as key from keys").all() : [];
  if (!manyAccounts) owners = [await newOwner(store, "one")];
  while (owners.length < 100 && manyAccounts) owners.push(await newOwner(store, "many"));
  const heads = new Map<string, string | null>();
  for (const row of sqlite.prepare<[], { id: string; ledger_head: string | null }>("select id, ledger_head from accounts").all()) heads.set(row.id, row.ledger_head);
  return { store, owners, heads };
}

let seed = 1;
/** CPU µs per row (all, and system time alone) for `count` rows appended to the subject's ledger. */
function appendRows(s: Subject, count: number): { cpu: number; system: number } {
  const sqlite: SqliteDatabase.Database = s.store.handle.sqlite!;
  const dimensions = LEDGER_DIMENSION_COLUMNS.map(() => 0n);
  // The rows and their hashes are made before the clock starts: what is timed is SQLite's part.
  const rows = Array.from({ length: count }, () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const owner = s.owners[seed % s.owners.length]!;
    const row: unknown[] = [
      BigInt(Date.now()),
      owner.account,
      owner.key,
      newRequestId(),
      "usage",
      "pair-model",
      "mockai",
      "chat",
      20n,
      0n,
      9n,
      0n,
      1000n,
      0n,
      null,
      null,
      ...dimensions,
      1n,
    ];
    const hash = ledgerRowHashFromValues(s.heads.get(owner.account) ?? null, row);
    s.heads.set(owner.account, hash);
    row.push(hash);
    return row;
  });
  const insert = sqlite.prepare(
    `insert into ledger (${LEDGER_CHAIN_COLUMNS.map((c) => c.name).join(", ")}, hash) values (${LEDGER_CHAIN_COLUMNS.map(() => "?").join(", ")}, ?) on conflict (request_id) do nothing returning id`,
  );
  const setHead = sqlite.prepare("update accounts set ledger_head = ? where id = ?");
  const transaction = sqlite.transaction((chunk: unknown[][]) => {
    for (const row of chunk) {
      insert.get(row);
      setHead.run(row[row.length - 1], row[1]);
    }
  });
  const before = process.cpuUsage();
  for (let i = 0; i < count; i += ROWS_PER_TRANSACTION) transaction(rows.slice(i, i + ROWS_PER_TRANSACTION));
  const used = process.cpuUsage(before);
  return { cpu: (used.user + used.system) / count, system: used.system / count };
}

const dir = mkdtempSync(join(filledPath, "..", "ledger-insert-ab-"));
try {
  const subjects: Array<{ variant: string; empty: Subject; filled: Subject }> = [];
  for (const [i, variant] of variants.entries()) {
    const copy = join(dir, `filled-${i}.db`);
    copyFileSync(filledPath, copy);
    subjects.push({ variant, empty: await subject(join(dir, `empty-${i}.db`), variant), filled: await subject(copy, variant) });
  }
  for (const s of subjects) {
    appendRows(s.empty, 1000);
    appendRows(s.filled, 1000);
  }
  const results = new Map(variants.map((v) => [v, { empty: [] as number[], filled: [] as number[], emptySystem: [] as number[], filledSystem: [] as number[] }]));
  for (let round = 0; round < rounds; round++) {
    for (const s of round % 2 ? subjects.slice().reverse() : subjects) {
      const result = results.get(s.variant)!;
      const order = round % 2 ? (["filled", "empty"] as const) : (["empty", "filled"] as const);
      for (const side of order) {
        const r = appendRows(s[side], rowsPerRound);
        result[side].push(r.cpu);
        result[side === "empty" ? "emptySystem" : "filledSystem"].push(r.system);
      }
    }
  }
  const median = (v: number[]) => v.slice().sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
  const list = (v: number[]) => v.map((x) => x.toFixed(1)).join(" ");
  for (const [variant, r] of results) {
    process.stdout.write(
      `${variant}: CPU µs/row empty ${median(r.empty).toFixed(1)} [${list(r.empty)}], filled ${median(r.filled).toFixed(1)} [${list(r.filled)}]; ` +
        `system µs/row empty ${median(r.emptySystem).toFixed(1)}, filled ${median(r.filledSystem).toFixed(1)}\n`,
    );
  }
  for (const s of subjects) {
    await s.empty.store.close();
    await s.filled.store.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
