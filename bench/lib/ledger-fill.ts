// Fills a (bench or test) database's ledger with N valid rows quickly: the ledger-growth step of the
// bench (bench/ledger-growth.ts, 10 million rows) and its 100,000-row version in the tests.
//
// Valid rows: each carries its chain hash (src/store/ledger-chain.ts, the one definition), computed here
// in id order per account from the account's ledger_head, and ledger_head moves with it, so the chain
// walk of `gateway admin ledger verify` accepts the result; the usage rollup (usage_hourly, migration
// 0017) gets the rows' sums. The accounts' and keys' counters and monthly_usage are left as they were
// (verify's recomputation names them). An unkeyed chain only (ADR 0032). Fast: the rows go in chunks of CHUNK_ROWS per transaction with the ledger's
// insert triggers set aside for that transaction only (what they would do, this does in bulk: the hash,
// the head, the rollup; the no-replace check is moot for new ids and request ids). SQLite: the insert
// triggers are dropped and re-created from their own text inside the transaction; PostgreSQL:
// `session_replication_role = replica` for the transaction (superuser; the bench's and tests'
// databases are their own). No committed state ever lacks a trigger.
//
// PostgreSQL's rows go in with COPY on a connection of the fill's own (`postgresUrl`), generated while
// the server takes them in: twice the rows per second of INSERT … FROM unnest(arrays) (bench/results/history/
// 2026-11-25T1250-ledger-fill-copy.md). The rollup is summed here as the rows are made, and an hour's groups are written
// once, when the rows have passed that hour (rows come in time order, and the fill's keys are its own,
// so no group is ever written twice); before, a GROUP BY over each chunk's rows took a third of the
// fill's time.
//
// The shape: a busy key with `busyKeyRows` rows evenly over the last 30 days, and the other rows spread
// evenly over the last 365 days across `otherAccounts` accounts of two keys each, 3 models, 2 providers.
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { sql } from "kysely";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { newId } from "../../src/core/ids.js";
import { LEDGER_DIMENSION_COLUMNS } from "../../src/core/dimensions.js";
import type { Store } from "../../src/store/index.js";
import { LEDGER_CHAIN_COLUMNS, ledgerRowHashFromValues } from "../../src/store/ledger-chain.js";
import { SUMMED_COLUMNS } from "../../src/billing/usage-report.js";
import { HOUR_MS } from "../../src/store/dimension-sql.js";

const DAY_MS = 86_400_000;
const CHUNK_ROWS = 100_000;
// 20 rows of 43 values: under SQLite's 32,766 parameters, and most of the per-statement cost shared.
const SQLITE_STATEMENT_ROWS = 20;
/** Rows of COPY text handed to the connection at a time. */
const COPY_BATCH_ROWS = 500;
const MODELS = ["fill-small", "fill-medium", "fill-large"];
const PROVIDERS = ["fill-a", "fill-b"];

export interface LedgerFillOptions {
  rows: number;
  busyKeyRows: number;
  otherAccounts?: number;
  now?: number;
  /** Called after each chunk with the rows written so far. */
  onProgress?: (written: number, total: number) => void;
  /** Stops after the chunk that passes this time (epoch ms); the result says how many rows went in. */
  deadline?: number;
  /** PostgreSQL: the database's URL, for the fill's COPY connection (required there). */
  postgresUrl?: string | null;
}

export interface LedgerFillResult {
  rows: number;
  busyAccountId: string;
  busyKeyId: string;
  otherKeyIds: string[];
  seconds: number;
  /** Of `seconds`, the rows' generation and writing alone (no set-up, no ANALYZE): what sizes a fill to a budget. */
  writeSeconds: number;
  now: number;
}

const COLUMN_NAMES = [...LEDGER_CHAIN_COLUMNS.map((c) => c.name), "hash"];
const INDEX = new Map(COLUMN_NAMES.map((name, i) => [name, i]));
const at = (name: string) => INDEX.get(name)!;

/** The generator of rows, in time (and id) order; deterministic. */
function* rowStream(
  options: Required<Omit<LedgerFillOptions, "onProgress" | "deadline" | "postgresUrl">>,
  busy: { account: string; key: string },
  others: Array<{ account: string; key: string }>,
) {
  const { rows, busyKeyRows, now } = options;
  const otherRows = rows - busyKeyRows;
  const busyStart = now - 30 * DAY_MS;
  const otherStart = now - 365 * DAY_MS;
  const busyStep = (30 * DAY_MS) / Math.max(1, busyKeyRows);
  const otherStep = (365 * DAY_MS) / Math.max(1, otherRows);
  let b = 0;
  let o = 0;
  let seed = 12345;
  while (b < busyKeyRows || o < otherRows) {
    const busyTime = b < busyKeyRows ? busyStart + Math.floor(b * busyStep) : Infinity;
    const otherTime = o < otherRows ? otherStart + Math.floor(o * otherStep) : Infinity;
    seed = (seed * 1103515245 + 12345) % 2147483648;
    let owner;
    let time;
    if (busyTime <= otherTime) {
      owner = busy;
      time = busyTime;
      b++;
    } else {
      owner = others[seed % others.length]!;
      time = otherTime;
      o++;
    }
    yield { owner, time, seed };
  }
}

function rowValues(owner: { account: string; key: string }, time: number, seed: number, requestId: string): unknown[] {
  const values: unknown[] = new Array(COLUMN_NAMES.length).fill(null);
  const input = BigInt(100 + (seed % 4000));
  const output = BigInt(10 + ((seed >> 8) % 1000));
  const cached = BigInt((seed >> 4) % 3 === 0 ? Number(input) >> 1 : 0);
  const inputCost = (input - cached) * 2_000n;
  const cachedCost = cached * 1_000n;
  const outputCost = output * 8_000n;
  for (const column of LEDGER_DIMENSION_COLUMNS) values[at(column)] = 0n;
  values[at("created_at")] = BigInt(time);
  values[at("account_id")] = owner.account;
  values[at("key_id")] = owner.key;
  values[at("request_id")] = requestId;
  values[at("kind")] = "usage";
  values[at("model")] = MODELS[seed % MODELS.length];
  // Each model has its provider, as in a config without routing groups.
  values[at("provider")] = PROVIDERS[(seed % MODELS.length) % PROVIDERS.length];
  values[at("route")] = "chat";
  values[at("input_tokens")] = input;
  values[at("cached_tokens")] = cached;
  values[at("output_tokens")] = output;
  values[at("reasoning_tokens")] = 0n;
  values[at("cost_nano")] = inputCost + cachedCost + outputCost;
  values[at("estimated")] = 0n;
  values[at("input_cost_nano")] = inputCost;
  values[at("cached_input_cost_nano")] = cachedCost;
  values[at("output_cost_nano")] = outputCost;
  values[at("cache_saving_nano")] = cached * 1_000n;
  values[at("attempts")] = 1n;
  return values;
}

const ROLLUP_COLUMNS = ["key_id", "hour", "account_id", "model", "provider", "requests", ...SUMMED_COLUMNS];
const SUMMED_INDEXES = SUMMED_COLUMNS.map((name) => at(name));

/** usage_hourly's groups of the rows made so far whose hour is not yet written (the trigger's sums, in bulk). */
class HourlyRollup {
  private readonly open = new Map<string, { group: unknown[]; sums: bigint[] }>();

  add(values: unknown[]): void {
    const group = [
      values[at("key_id")] ?? "",
      (values[at("created_at")] as bigint) / BigInt(HOUR_MS),
      values[at("account_id")],
      values[at("model")] ?? "",
      values[at("provider")] ?? "",
    ];
    const name = group.join("\u0000");
    let entry = this.open.get(name);
    if (!entry) this.open.set(name, (entry = { group, sums: new Array<bigint>(1 + SUMMED_INDEXES.length).fill(0n) }));
    entry.sums[0]! += 1n;
    for (let i = 0; i < SUMMED_INDEXES.length; i++) entry.sums[i + 1]! += (values[SUMMED_INDEXES[i]!] as bigint | null) ?? 0n;
  }

  /** usage_hourly rows (ROLLUP_COLUMNS) of the hours before `hour` (all with null), taken out. */
  take(hour: bigint | null): unknown[][] {
    const rows: unknown[][] = [];
    for (const [name, { group, sums }] of this.open) {
      if (hour !== null && (group[1] as bigint) >= hour) continue;
      rows.push([...group, ...sums]);
      this.open.delete(name);
    }
    return rows;
  }
}

/** What a chunk's transaction writes after its ledger rows. */
interface ChunkEnd {
  rollupRows: unknown[][];
  heads: Array<readonly [string, string]>;
}

interface ChunkWriter {
  /** One transaction: the ledger rows (`[id, ...COLUMN_NAMES]`, consumed as they are made), then `end()`'s. */
  write(rows: Iterable<unknown[]>, end: () => ChunkEnd): Promise<void>;
  close(): Promise<void>;
}

export async function fillLedger(store: Store, options: LedgerFillOptions): Promise<LedgerFillResult> {
  const began = performance.now();
  const settings = { otherAccounts: 99, now: Date.now(), ...options };
  if (store.dialect === "postgres" && !settings.postgresUrl) throw new Error("fillLedger: postgresUrl is required on PostgreSQL");
  const busyAccount = await store.accounts.create({ email: `fill-busy-${newId("x")}@example.com`, tier: "standard", balance: 10n ** 15n });
  const { key: busyKey } = await store.keys.create({ accountId: busyAccount.id, name: "busy" });
  const others: Array<{ account: string; key: string }> = [];
  for (let i = 0; i < settings.otherAccounts; i++) {
    const account = await store.accounts.create({ email: `fill-${i}-${newId("x")}@example.com`, tier: "standard", balance: 10n ** 15n });
    for (const name of ["one", "two"]) others.push({ account: account.id, key: (await store.keys.create({ accountId: account.id, name })).key.id });
  }
  const heads = new Map<string, string | null>();
  for (const row of await store.db.selectFrom("accounts").select(["id", "ledger_head"]).execute()) heads.set(row.id, row.ledger_head);
  let nextId = BigInt((await sql<{ id: bigint | null }>`select max(id) as id from ledger`.execute(store.db)).rows[0]?.id ?? 0) + 1n;

  const stream = rowStream(settings, { account: busyAccount.id, key: busyKey.id }, others);
  const rollup = new HourlyRollup();
  const tag = newId("fill");
  let written = 0;
  let done = false;
  const writeBegan = performance.now();
  const writer = store.dialect === "sqlite" ? sqliteWriter(store) : await postgresWriter(settings.postgresUrl!);
  try {
    while (!done) {
      const touched = new Set<string>();
      let lastHour = 0n;
      let count = 0;
      // Made while the chunk's transaction takes them: the hash chains on the previous row's.
      const rows = function* () {
        for (; count < CHUNK_ROWS; count++) {
          const next = stream.next();
          if (next.done) {
            done = true;
            return;
          }
          const { owner, time, seed } = next.value;
          const values = rowValues(owner, time, seed, `${tag}_${String(written + count).padStart(9, "0")}`);
          // The hash covers the values before it (the function reads LEDGER_CHAIN_COLUMNS' count of them).
          const hash = ledgerRowHashFromValues(heads.get(owner.account) ?? null, values);
          values[values.length - 1] = hash;
          heads.set(owner.account, hash);
          touched.add(owner.account);
          rollup.add(values);
          lastHour = BigInt(time) / BigInt(HOUR_MS);
          yield [nextId++, ...values];
        }
      };
      await writer.write(rows(), () => {
        if (settings.deadline !== undefined && Date.now() > settings.deadline) done = true;
        // The next rows are in lastHour or later: the hours before it are complete.
        return { rollupRows: rollup.take(done ? null : lastHour), heads: [...touched].map((id) => [id, heads.get(id)!] as const) };
      });
      written += count;
      if (count > 0) settings.onProgress?.(written, settings.rows);
    }
  } finally {
    await writer.close();
  }
  const writeSeconds = (performance.now() - writeBegan) / 1000;
  if (store.dialect === "postgres") await sql`select setval('ledger_id_seq', ${nextId})`.execute(store.db);
  await sql`analyze`.execute(store.db);
  return {
    rows: written,
    busyAccountId: busyAccount.id,
    busyKeyId: busyKey.id,
    otherKeyIds: others.map((o) => o.key),
    seconds: (performance.now() - began) / 1000,
    writeSeconds,
    now: settings.now,
  };
}

const LEDGER_COLUMNS = ["id", ...COLUMN_NAMES];

function sqliteWriter(store: Store): ChunkWriter {
  const sqlite = store.handle.sqlite!;
  const triggers = sqlite
    .prepare<[], { name: string; sql: string }>(`select name, sql from sqlite_master where type = 'trigger' and tbl_name = 'ledger' and sql like '%insert on ledger%'`)
    .all();
  const tuple = (columns: string[]) => `(${columns.map(() => "?").join(", ")})`;
  const insertMany = sqlite.prepare(`insert into ledger (${LEDGER_COLUMNS.join(", ")}) values ${Array(SQLITE_STATEMENT_ROWS).fill(tuple(LEDGER_COLUMNS)).join(", ")}`);
  const insertOne = sqlite.prepare(`insert into ledger (${LEDGER_COLUMNS.join(", ")}) values ${tuple(LEDGER_COLUMNS)}`);
  const insertRollup = sqlite.prepare(`insert into usage_hourly (${ROLLUP_COLUMNS.join(", ")}) values ${tuple(ROLLUP_COLUMNS)}`);
  const setHead = sqlite.prepare(`update accounts set ledger_head = ? where id = ?`);
  // The ledger's indexes take rows in key order, not append order: a page cache that holds their
  // working set (the connection's default is 2 MB) keeps the fill from reading pages back.
  const cacheSize = sqlite.pragma("cache_size", { simple: true }) as number;
  sqlite.pragma("cache_size = -1048576");
  return {
    write(rows, end) {
      sqlite.transaction(() => {
        for (const trigger of triggers) sqlite.exec(`drop trigger ${trigger.name}`);
        let batch: unknown[][] = [];
        for (const row of rows) {
          batch.push(row);
          if (batch.length === SQLITE_STATEMENT_ROWS) {
            insertMany.run(batch.flat());
            batch = [];
          }
        }
        for (const row of batch) insertOne.run(row);
        const { rollupRows, heads } = end();
        for (const row of rollupRows) insertRollup.run(row);
        for (const trigger of triggers) sqlite.exec(trigger.sql);
        for (const [account, head] of heads) setHead.run(head, account);
      })();
      return Promise.resolve();
    },
    close() {
      // What the gateway's connection runs with: the measurements after the fill see the same cache.
      sqlite.pragma(`cache_size = ${cacheSize}`);
      return Promise.resolve();
    },
  };
}

/** A value in COPY's text format. */
function copyText(value: unknown): string {
  if (value === null || value === undefined) return "\\N";
  if (typeof value === "bigint") return value.toString();
  const text = String(value);
  return /[\\\t\n\r]/.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => ({ "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" })[c]!) : text;
}

/** Rows as COPY text, COPY_BATCH_ROWS lines a piece. */
function* copyLines(rows: Iterable<unknown[]>): Generator<string> {
  let lines: string[] = [];
  for (const row of rows) {
    lines.push(row.map(copyText).join("\t"));
    if (lines.length === COPY_BATCH_ROWS) {
      yield lines.join("\n") + "\n";
      lines = [];
    }
  }
  if (lines.length > 0) yield lines.join("\n") + "\n";
}

async function postgresWriter(url: string): Promise<ChunkWriter> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const copy = (table: string, columns: string[], rows: Iterable<unknown[]>) =>
    pipeline(Readable.from(copyLines(rows)), client.query(copyFrom(`copy ${table} (${columns.join(", ")}) from stdin`)));
  return {
    async write(rows, end) {
      await client.query("begin");
      try {
        await client.query("set local session_replication_role = replica");
        await copy("ledger", LEDGER_COLUMNS, rows);
        const { rollupRows, heads } = end();
        await copy("usage_hourly", ROLLUP_COLUMNS, rollupRows);
        if (heads.length > 0) {
          await client.query("update accounts set ledger_head = h.head from unnest($1::text[], $2::text[]) as h(account, head) where accounts.id = h.account", [
            heads.map(([account]) => account),
            heads.map(([, head]) => head),
          ]);
        }
        await client.query("commit");
      } catch (error) {
        await client.query("rollback").catch(() => undefined);
        throw error;
      }
    },
    close: () => client.end(),
  };
}
