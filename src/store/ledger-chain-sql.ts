// The database side of the ledger's hash chain (src/store/ledger-chain.ts; ADR 0011), defined once
// and generated from a list of chained columns that the calling migration passes. Migration 0010
// creates it; a later migration that adds a chained column calls applyLedgerChainTriggers again with
// its own list, the previous one and the column appended.
//
// Both databases keep the head of each account's chain on its accounts row (ledger_head; null: the
// genesis value) and compute a row's hash inside the INSERT, so every path that appends a ledger row
// (settlement, gw_batch, credits, debits, the opening balance, hand-written SQL) is chained without knowing
// it, and the head is read and written under the lock that already serializes writes to the account:
//   SQLite: an AFTER INSERT trigger (a BEFORE trigger cannot set NEW) sets the new row's hash through
//     the registered function gw_ledger_hash and moves the head; the whole statement runs under the
//     database's write lock. ledger_no_update allows exactly that one change: a null hash set, every
//     other column unchanged. The trigger skips a row inserted with its hash: settlement, the hot
//     path, computes the hash and moves the head itself in the same transaction, because the
//     trigger's two UPDATEs cost three times as much (settlement-sqlite.ts; ADR 0011).
//   PostgreSQL: a BEFORE INSERT row trigger locks the account row (FOR UPDATE; gw_batch and the
//     balance changes hold it already), draws the row id only then, so that id order is chain order
//     across processes, reads the previous hash from the account's latest row (index ledger_account_chain;
//     under READ COMMITTED each statement of the trigger sees what the lock's previous holder
//     committed) and sets NEW.hash. The account's latest row, and whether a later one exists, are
//     asked as a row comparison on (account_id, id) (previousChainRowSql, nextChainRowSql): asked as
//     `account_id = $1 order by id desc limit 1`, PL/pgSQL's cached generic plan walked the primary
//     key backwards filtering on the account, which reads every row appended since the account's
//     last one: the whole ledger for an account's first row (about 1 s at 5 million rows). A row
//     whose request id is already recorded is about to be dropped by ON CONFLICT DO NOTHING (BEFORE
//     triggers fire for it too): it gets no hash. The head on the accounts row is written at commit,
//     by a deferred trigger, for the account's last row of the transaction only (the lock is still
//     held then), unless it already is that row's hash (gw_batch writes it with the account's
//     counters, saving a second UPDATE of the row per call); not per row, because each UPDATE of the
//     account row within one transaction adds a row version the next statement must walk past
//     (migration 0003). Measured with 64 concurrent settlements of one account (gw_batch): an UPDATE
//     per row cost ~540 µs per settlement, a per-statement trigger ~450 µs, this ~0 on top of the row
//     trigger.
// A keyed chain (migration 0023; ledger-chain-key.ts) adds a step after these on PostgreSQL: the
// trigger ledger_chain_key seals NEW.hash with the key; the SQLite function is sealed in database.ts.
// Neither changes what is generated here.
import { sql, type Kysely } from "kysely";
import type { Dialect } from "./dialect.js";
import { LEDGER_ENCODING_TAG, LEDGER_GENESIS_HASH, SQLITE_LEDGER_HASH_FUNCTION, type LedgerChainColumn } from "./ledger-chain.js";

const GENESIS = `'${LEDGER_GENESIS_HASH}'`;
const MAX_BIGINT = "9223372036854775807";

type ChainColumns = readonly LedgerChainColumn[];

/**
 * `columns`: the chain's columns as the calling migration knows them, in encoding order (a literal of
 * that migration, so that its SQL never changes; a later migration that adds a column applies them
 * again with it appended).
 */
export async function applyLedgerChainTriggers(db: Kysely<unknown>, dialect: Dialect, columns: ChainColumns): Promise<void> {
  const statements = dialect === "sqlite" ? sqliteStatements(columns) : postgresStatements(columns);
  for (const statement of statements) await sql.raw(statement).execute(db);
}

/** SQLite's append-only rule for updates, with the one exception the chain trigger needs. */
export function sqliteLedgerNoUpdateTrigger(columns: ChainColumns): string {
  const changed = ["id", ...columns.map((c) => c.name)].map((name) => `new.${name} is not old.${name}`);
  return `create trigger ledger_no_update before update on ledger
    when old.hash is not null or new.hash is null or ${changed.join(" or ")}
    begin select raise(abort, 'ledger rows are append-only'); end`;
}

function sqliteStatements(columns: ChainColumns): string[] {
  const values = columns.map((c) => `new.${c.name}`).join(", ");
  return [
    `drop trigger if exists ledger_no_update`,
    sqliteLedgerNoUpdateTrigger(columns),
    `drop trigger if exists ledger_chain`,
    `create trigger ledger_chain after insert on ledger when new.hash is null
    begin
      update ledger set hash = ${SQLITE_LEDGER_HASH_FUNCTION}(coalesce((select ledger_head from accounts where id = new.account_id), ${GENESIS}), ${values})
        where id = new.id;
      update accounts set ledger_head = (select hash from ledger where id = new.id) where id = new.account_id;
    end`,
  ];
}

/**
 * The ledger row just before `account`'s end in (account_id, id) order: the account's latest row, or
 * (when it has none) another account's, which the caller tells apart by its account_id.
 */
export function previousChainRowSql(account: string): string {
  return `select account_id, hash from ledger where (account_id, id) < (${account}, ${MAX_BIGINT}) order by account_id desc, id desc limit 1`;
}

/** The ledger row just after (`account`, `id`): the account's next row, if its account_id is `account`. */
export function nextChainRowSql(account: string, id: string): string {
  return `select account_id from ledger where (account_id, id) > (${account}, ${id}) order by account_id, id limit 1`;
}

/** The PostgreSQL expression of ledgerChainEncoding (ledger-chain.ts) over a ledger row `r`. */
function postgresEncoding(columns: ChainColumns): string {
  const parts = columns.map(({ name, type }) => {
    const value = `r.${name}::text`;
    const absent = type === "integer" ? `r.${name} is null or r.${name} = 0` : `r.${name} is null`;
    return `case when ${absent} then '' else '${name}=' || octet_length(convert_to(${value}, 'UTF8')) || ':' || ${value} || chr(10) end`;
  });
  return [`'${LEDGER_ENCODING_TAG}' || chr(10) || p_prev || chr(10)`, ...parts].join("\n    || ");
}

function postgresStatements(columns: ChainColumns): string[] {
  return [
    // PL/pgSQL, not SQL: a SQL function called from the trigger is parsed and planned on every call.
    `create or replace function gw_ledger_hash(p_prev text, r ledger) returns text language plpgsql stable as $$
begin
  return encode(sha256(convert_to(${postgresEncoding(columns)}, 'UTF8')), 'hex');
end $$`,
    `create or replace function ledger_chain() returns trigger language plpgsql as $$
declare
  v_prev text;
  v_prev_account text;
  v_anchor text;
begin
  select ledger_anchor into v_anchor from accounts where id = new.account_id for update;
  new.id := nextval('ledger_id_seq');
  if exists (select 1 from ledger where request_id = new.request_id) then
    new.hash := null;
    return new;
  end if;
  ${previousChainRowSql("new.account_id")} into v_prev_account, v_prev;
  if v_prev_account is distinct from new.account_id then
    v_prev := null;
  end if;
  new.hash := gw_ledger_hash(coalesce(v_prev, v_anchor, ${GENESIS}), new);
  return new;
end $$`,
    `create or replace function ledger_chain_head() returns trigger language plpgsql as $$
declare
  v_next_account text;
begin
  ${nextChainRowSql("new.account_id", "new.id")} into v_next_account;
  if v_next_account is distinct from new.account_id then
    update accounts set ledger_head = new.hash where id = new.account_id and ledger_head is distinct from new.hash;
  end if;
  return null;
end $$`,
    `create index if not exists ledger_account_chain on ledger (account_id, id)`,
    `drop trigger if exists ledger_chain on ledger`,
    `create trigger ledger_chain before insert on ledger for each row execute function ledger_chain()`,
    `drop trigger if exists ledger_chain_head on ledger`,
    `create constraint trigger ledger_chain_head after insert on ledger deferrable initially deferred
      for each row when (new.hash is not null) execute function ledger_chain_head()`,
  ];
}
