// Fills a (bench or test) database's ledger with N valid rows quickly: the ledger-growth step of the
// bench (bench/ledger-growth.ts, 10 million rows) and its 100,000-row version in the tests.
//
// Valid rows: each carries its chain hash (src/store/ledger-chain.ts, the one definition), computed here
// in id order per account from the account's ledger_head, and ledger_head moves with it, so
// `gateway admin ledger verify` accepts the result; the usage rollup (usage_hourly, migration 0017)
// gets the rows' sums. Fast: the rows go in chunks of CHUNK_ROWS per transaction with the ledger's
// insert triggers set aside for that transaction only (what they would do, this does in bulk: the hash,
// the head, the rollup; the no-replace check is moot for new ids and request ids). SQLite: the insert
// triggers are dropped and re-created from their own text inside the transaction; PostgreSQL:
// `session_replication_role = replica` for the transaction (superuser; the bench's and tests'
// databases are their own). No committed state ever lacks a trigger.
//
// The shape: a busy key with `busyKeyRows` rows evenly over the last 30 days, and the other rows spread
// evenly over the last 365 days across `otherAccounts` accounts of two keys each, 3 models, 2 providers.
import { sql, type Kysely } from "kysely";
import { newId } from "../../src/core/ids.js";
import { LEDGER_DIMENSION_COLUMNS } from "../../src/billing/dimensions.js";
import type { Store } from "../../src/store/index.js";
import { LEDGER_CHAIN_COLUMNS, ledgerRowHashFromValues } from "../../src/store/ledger-chain.js";
import { HOUR_MS, ROLLUP_SUMMED_COLUMNS } from "../../src/store/migrations/0017-usage-rollup.js";
import type { Database } from "../../src/store/tables.js";

const DAY_MS = 86_400_000;
const CHUNK_ROWS = 100_000;
const PG_STATEMENT_ROWS = 5_000;
// 20 rows of 43 values: under SQLite's 32,766 parameters, and most of the per-statement cost shared.
const SQLITE_STATEMENT_ROWS = 20;
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
}

export interface LedgerFillResult {
  rows: number;
  busyAccountId: string;
  busyKeyId: string;
  otherKeyIds: string[];
  seconds: number;
  now: number;
}

const COLUMN_NAMES = [...LEDGER_CHAIN_COLUMNS.map((c) => c.name), "hash"];
const INDEX = new Map(COLUMN_NAMES.map((name, i) => [name, i]));
const at = (name: string) => INDEX.get(name)!;

/** The generator of rows, in time (and id) order; deterministic. */
function* rowStream(
  options: Required<Omit<LedgerFillOptions, "onProgress" | "deadline">>,
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

/** Adds the ledger rows with ids in [firstId, lastId] to usage_hourly (the bulk form of the rollup trigger). */
function rollupRangeSql(firstId: bigint, lastId: bigint) {
  const group = sql.raw(`coalesce(key_id, ''), created_at / ${HOUR_MS}, account_id, coalesce(model, ''), coalesce(provider, '')`);
  const sums = sql.raw(ROLLUP_SUMMED_COLUMNS.map((c) => `sum(${c})`).join(", "));
  const columns = sql.raw(["key_id", "hour", "account_id", "model", "provider", "requests", ...ROLLUP_SUMMED_COLUMNS].join(", "));
  const updates = sql.raw(["requests", ...ROLLUP_SUMMED_COLUMNS].map((c) => `${c} = usage_hourly.${c} + excluded.${c}`).join(", "));
  // `where true`: SQLite's parser needs it between a SELECT and its upsert clause.
  return sql`insert into usage_hourly (${columns})
    select ${group}, count(*), ${sums} from ledger where id between ${firstId} and ${lastId} and kind = 'usage' group by ${group}
    on conflict (key_id, hour, account_id, model, provider) do update set ${updates}`;
}

export async function fillLedger(store: Store, options: LedgerFillOptions): Promise<LedgerFillResult> {
  const began = performance.now();
  const settings = { otherAccounts: 99, now: Date.now(), ...options };
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

  const busy = { account: busyAccount.id, key: busyKey.id };
  const stream = rowStream(settings, busy, others);
  const tag = newId("fill");
  let written = 0;
  for (;;) {
    const chunk: unknown[][] = [];
    for (let next = stream.next(); ; next = stream.next()) {
      if (next.done) break;
      const { owner, time, seed } = next.value;
      const values = rowValues(owner, time, seed, `${tag}_${String(written + chunk.length).padStart(9, "0")}`);
      // The hash covers the values before it (the function reads LEDGER_CHAIN_COLUMNS' count of them).
      const hash = ledgerRowHashFromValues(heads.get(owner.account) ?? null, values);
      values[values.length - 1] = hash;
      heads.set(owner.account, hash);
      chunk.push(values);
      if (chunk.length === CHUNK_ROWS) break;
    }
    if (chunk.length === 0) break;
    const firstId = nextId;
    nextId += BigInt(chunk.length);
    const touched = new Set(chunk.map((values) => values[at("account_id")] as string));
    await writeChunk(
      store,
      chunk,
      firstId,
      nextId - 1n,
      [...touched].map((id) => [id, heads.get(id)!] as const),
    );
    written += chunk.length;
    settings.onProgress?.(written, settings.rows);
    if (settings.deadline !== undefined && Date.now() > settings.deadline) break;
  }
  if (store.dialect === "postgres") await sql`select setval('ledger_id_seq', ${nextId})`.execute(store.db);
  await sql`analyze`.execute(store.db);
  return {
    rows: written,
    busyAccountId: busyAccount.id,
    busyKeyId: busyKey.id,
    otherKeyIds: others.map((o) => o.key),
    seconds: (performance.now() - began) / 1000,
    now: settings.now,
  };
}

async function writeChunk(store: Store, chunk: unknown[][], firstId: bigint, lastId: bigint, heads: ReadonlyArray<readonly [string, string]>): Promise<void> {
  const withIds = chunk.map((values, i) => [firstId + BigInt(i), ...values]);
  const columns = ["id", ...COLUMN_NAMES];
  if (store.dialect === "sqlite") {
    const sqlite = store.handle.sqlite!;
    const triggers = sqlite
      .prepare<[], { name: string; sql: string }>(`select name, sql from sqlite_master where type = 'trigger' and tbl_name = 'ledger' and sql like '%insert on ledger%'`)
      .all();
    const tuple = `(${columns.map(() => "?").join(", ")})`;
    const insertMany = sqlite.prepare(`insert into ledger (${columns.join(", ")}) values ${Array(SQLITE_STATEMENT_ROWS).fill(tuple).join(", ")}`);
    const insertOne = sqlite.prepare(`insert into ledger (${columns.join(", ")}) values ${tuple}`);
    const setHead = sqlite.prepare(`update accounts set ledger_head = ? where id = ?`);
    const compiled = rollupRangeSql(firstId, lastId).compile(store.db);
    // The ledger's five indexes take rows in key order, not append order: a page cache that holds
    // their working set (the connection's default is 2 MB) keeps the fill from reading pages back.
    const cacheSize = sqlite.pragma("cache_size", { simple: true }) as number;
    sqlite.pragma("cache_size = -1048576");
    sqlite.transaction(() => {
      for (const trigger of triggers) sqlite.exec(`drop trigger ${trigger.name}`);
      let i = 0;
      for (; i + SQLITE_STATEMENT_ROWS <= withIds.length; i += SQLITE_STATEMENT_ROWS) insertMany.run(withIds.slice(i, i + SQLITE_STATEMENT_ROWS).flat());
      for (; i < withIds.length; i++) insertOne.run(withIds[i]);
      sqlite.prepare(compiled.sql).run(...(compiled.parameters as unknown[]));
      for (const trigger of triggers) sqlite.exec(trigger.sql);
      for (const [account, head] of heads) setHead.run(head, account);
    })();
    // What the gateway's connection runs with: the measurements after the fill see the same cache.
    sqlite.pragma(`cache_size = ${cacheSize}`);
    return;
  }
  await store.db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx);
    for (let i = 0; i < withIds.length; i += PG_STATEMENT_ROWS) await insertPostgres(trx, columns, withIds.slice(i, i + PG_STATEMENT_ROWS));
    await rollupRangeSql(firstId, lastId).execute(trx);
    const values = sql.join(heads.map(([account, head]) => sql`(cast(${account} as text), cast(${head} as text))`));
    await sql`with h(account, head) as (values ${values}) update accounts set ledger_head = h.head from h where accounts.id = h.account`.execute(trx);
  });
}

/** One INSERT … SELECT FROM unnest(one array per column): one statement, one parameter per column. */
async function insertPostgres(trx: Kysely<Database>, columns: string[], rows: unknown[][]): Promise<void> {
  const types = columns.map((name) => (name === "id" || LEDGER_CHAIN_COLUMNS.find((c) => c.name === name)?.type === "integer" ? "bigint" : "text"));
  const arrays = columns.map((_, c) => rows.map((row) => (typeof row[c] === "bigint" ? row[c].toString() : row[c])));
  const unnest = sql.join(arrays.map((array, c) => sql`cast(${array} as ${sql.raw(types[c]!)}[])`));
  await sql`insert into ledger (${sql.raw(columns.join(", "))}) select * from unnest(${unnest})`.execute(trx);
}
