// The ledger becomes a hash chain per account (src/store/ledger-chain.ts; ADR 0011):
//   ledger.hash            SHA-256 hex over the previous hash of the account and the row's encoding;
//   accounts.ledger_head   the hash of the account's latest row (null: no row yet, the genesis value);
//   accounts.ledger_anchor what the account's oldest remaining row chains to once `ledger prune` has
//                          deleted older rows (null: nothing pruned, the genesis value).
// Existing rows are chained here, in id order, one page at a time (memory: one page plus one hash per
// account), then the triggers of ledger-chain-sql.ts chain every later insert. The migration is
// one transaction: on PostgreSQL ALTER TABLE holds the ledger's lock until it commits, so no gateway
// process appends a row between the walk and the trigger; on SQLite the write lock does the same.
// The append-only guard must let this one-time update through: on SQLite the new ledger_no_update
// allows setting a null hash and nothing else; on PostgreSQL ledger_guard is disabled for the walk,
// inside this transaction, and enabled again before it commits.
import { sql, type Kysely } from "kysely";
import type { Dialect } from "../dialect.js";
import { LEDGER_GENESIS_HASH, ledgerRowHash, type LedgerChainColumn } from "../ledger-chain.js";
import { applyLedgerChainTriggers } from "../ledger-chain-sql.js";

const PAGE_ROWS = 1000;

const integer = (name: string): LedgerChainColumn => ({ name, type: "integer" });
const text = (name: string): LedgerChainColumn => ({ name, type: "text" });

/**
 * The columns the chain covered at this migration, in encoding order (frozen: what the triggers and the
 * walk below hash never changes with the code): the ledger's columns except id and hash, those of
 * migration 0008 in its order.
 */
export const LEDGER_CHAIN_COLUMNS_AT_0010: readonly LedgerChainColumn[] = [
  integer("created_at"),
  text("account_id"),
  text("key_id"),
  text("request_id"),
  text("kind"),
  text("model"),
  text("provider"),
  text("route"),
  integer("input_tokens"),
  integer("cached_tokens"),
  integer("output_tokens"),
  integer("reasoning_tokens"),
  integer("cost_nano"),
  integer("estimated"),
  text("note"),
  text("deployment"),
  ...[
    "cache_write_5m_tokens",
    "cache_write_1h_tokens",
    "web_search_calls",
    "images",
    "video_seconds",
    "input_cost_nano",
    "cached_input_cost_nano",
    "cache_write_5m_cost_nano",
    "cache_write_1h_cost_nano",
    "output_cost_nano",
    "web_search_cost_nano",
    "request_cost_nano",
    "image_cost_nano",
    "video_cost_nano",
    "cache_saving_nano",
  ].map(integer),
];

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema.alterTable("ledger").addColumn("hash", "text").execute();
  await db.schema.alterTable("accounts").addColumn("ledger_head", "text").execute();
  await db.schema.alterTable("accounts").addColumn("ledger_anchor", "text").execute();
  // SQLite: the new ledger_no_update (part of the triggers) is what lets the walk set the hashes.
  // The chain covers the columns the ledger has now; a later migration adding one applies them again.
  const ledger = (await db.introspection.getTables()).find((t) => t.name === "ledger");
  const present = new Set(ledger?.columns.map((c) => c.name));
  const columns = LEDGER_CHAIN_COLUMNS_AT_0010.filter((c) => present.has(c.name));
  if (dialect === "sqlite") await applyLedgerChainTriggers(db, dialect, columns);
  else await sql`alter table ledger disable trigger ledger_guard`.execute(db);

  const heads = await chainExistingRows(db, columns);

  if (dialect === "postgres") {
    await sql`alter table ledger enable trigger ledger_guard`.execute(db);
    await applyLedgerChainTriggers(db, dialect, columns);
  }
  for (const page of pages([...heads], PAGE_ROWS)) {
    const values = sql.join(page.map(([account, head]) => sql`(cast(${account} as text), cast(${head} as text))`));
    await sql`with h(account, head) as (values ${values}) update accounts set ledger_head = h.head from h where accounts.id = h.account`.execute(db);
  }
}

/** Sets every row's hash in id order; answers each account's last hash. */
async function chainExistingRows(db: Kysely<unknown>, chained: readonly LedgerChainColumn[]): Promise<Map<string, string>> {
  const heads = new Map<string, string>();
  const columns = sql.join(chained.map((c) => sql.ref(c.name)));
  let after = 0n;
  for (;;) {
    const { rows } = await sql<Record<string, unknown> & { id: bigint; account_id: string }>`
      select id, ${columns} from ledger where id > ${after} order by id limit ${PAGE_ROWS}`.execute(db);
    if (rows.length === 0) return heads;
    const hashes = rows.map((row) => {
      const hash = ledgerRowHash(heads.get(row.account_id) ?? LEDGER_GENESIS_HASH, row, chained);
      heads.set(row.account_id, hash);
      return sql`(cast(${row.id} as bigint), cast(${hash} as text))`;
    });
    // A CTE with named columns: the one form of a VALUES list with names that both databases take.
    await sql`with c(id, hash) as (values ${sql.join(hashes)}) update ledger set hash = c.hash from c where ledger.id = c.id`.execute(db);
    after = rows[rows.length - 1]!.id;
  }
}

function pages<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
