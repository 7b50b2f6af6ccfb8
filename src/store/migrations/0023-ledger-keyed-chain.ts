// What `gateway admin ledger verify` needs so as not to trust what it checks (issue 39; ADR 0032):
//
// 1. ledger_chain_keys: from which ledger id on the hash chain is keyed, and with which key (by its id,
//    never the key), each record with a MAC under that key (src/store/ledger-chain-key.ts). Empty
//    until a gateway starts with GATEWAY_LEDGER_SECRET. Append-only, like the ledger.
// 2. PostgreSQL: the BEFORE INSERT trigger ledger_chain_key, fired after ledger_chain (triggers of one
//    kind fire in name order), seals the hash ledger_chain computed when an epoch covers the row's id:
//    HMAC-SHA256 under the key, from the session setting gateway.ledger_key (HMAC's two padded keys
//    and the key id, hex), with the built-in sha256() (no extension needed). A session without the
//    setting, or with another key's, is refused there; rows before the first epoch stay unkeyed. On
//    SQLite the gateway's own code seals (its registered gw_ledger_hash function and settlement):
//    nothing changes in the database.
// 3. What `ledger prune` deleted, per account and per key, so that balances and spend are still
//    explained by the ledger after a prune: accounts.pruned_balance_nano (the deleted rows' net effect
//    on the balance) and pruned_spent_nano, keys.pruned_spent_nano and pruned_tokens. Accounts pruned
//    before this migration get the difference between their stored figures and the rows that remain
//    (the best that can be known now; their keys likewise); every other account and key gets 0, so that
//    a figure already wrong stays visible.
import { sql, type Kysely } from "kysely";
import type { Dialect } from "../dialect.js";

/** The session setting the trigger reads (ledger-chain-key.ts POSTGRES_LEDGER_KEY_SETTING is the runtime's copy). */
export const LEDGER_KEY_SETTING = "gateway.ledger_key";

/** A row's effect on its account's balance as of this migration (ledger-totals-sql.ts has the runtime's). */
function balanceEffect(dialect: Dialect): string {
  const shortfall =
    dialect === "sqlite"
      ? `case when l.kind = 'usage' and substr(l.note, 1, 15) = 'shortfall_nano=' then cast(substr(l.note, 16) as integer) else 0 end`
      : `case when l.kind = 'usage' and l.note ~ '^shortfall_nano=[0-9]{1,19}$' then cast(substr(l.note, 16) as numeric) else 0 end`;
  return `case l.kind when 'credit' then l.cost_nano when 'debit' then -l.cost_nano else ${shortfall} - l.cost_nano end`;
}

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable("ledger_chain_keys")
    .addColumn("from_id", "bigint", (c) => c.primaryKey())
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("mac", "text", (c) => c.notNull())
    .execute();
  if (dialect === "sqlite") {
    await sql`create trigger ledger_chain_keys_no_update before update on ledger_chain_keys
      begin select raise(abort, 'ledger_chain_keys rows are append-only'); end`.execute(db);
    await sql`create trigger ledger_chain_keys_no_delete before delete on ledger_chain_keys
      begin select raise(abort, 'ledger_chain_keys rows are append-only'); end`.execute(db);
  } else {
    await sql`create function ledger_chain_keys_guard() returns trigger language plpgsql as $$
        begin
          raise exception 'ledger_chain_keys rows are append-only';
        end $$`.execute(db);
    await sql`create trigger ledger_chain_keys_guard before update or delete on ledger_chain_keys
      for each row execute function ledger_chain_keys_guard()`.execute(db);
    await sql`create trigger ledger_chain_keys_no_truncate before truncate on ledger_chain_keys
      for each statement execute function ledger_chain_keys_guard()`.execute(db);
    // A row is sealed when an epoch covers its id (ledger_chain_keys.from_id <= id; ledger_chain
    // drew the id): with the session's key, which must be that epoch's (the setting ends with its key
    // id), or not at all. A duplicate dropped by ON CONFLICT DO NOTHING got no hash: nothing to seal.
    await sql`create function ledger_chain_key() returns trigger language plpgsql as $$
        declare
          v_key text;
          v_epoch_key text;
        begin
          if new.hash is null then
            return new;
          end if;
          select key_id into v_epoch_key from ledger_chain_keys where from_id <= new.id order by from_id desc limit 1;
          if not found then
            return new;
          end if;
          v_key := current_setting(${sql.lit(LEDGER_KEY_SETTING)}, true);
          if coalesce(substr(v_key, 257), '') is distinct from v_epoch_key then
            raise exception 'ledger_chain_keyed: the ledger chain is keyed (key id %); ledger rows are appended by a gateway started with its GATEWAY_LEDGER_SECRET', v_epoch_key;
          end if;
          new.hash := encode(sha256(decode(substr(v_key, 129, 128), 'hex')
            || sha256(decode(substr(v_key, 1, 128), 'hex') || convert_to(new.hash, 'UTF8'))), 'hex');
          return new;
        end $$`.execute(db);
    await sql`create trigger ledger_chain_key before insert on ledger for each row execute function ledger_chain_key()`.execute(db);
  }

  for (const column of ["pruned_balance_nano", "pruned_spent_nano"]) {
    await db.schema
      .alterTable("accounts")
      .addColumn(column, "bigint", (c) => c.notNull().defaultTo(0))
      .execute();
  }
  for (const column of ["pruned_spent_nano", "pruned_tokens"]) {
    await db.schema
      .alterTable("keys")
      .addColumn(column, "bigint", (c) => c.notNull().defaultTo(0))
      .execute();
  }
  await sql
    .raw(
      `update accounts set
        pruned_balance_nano = balance_nano - coalesce((select sum(${balanceEffect(dialect)}) from ledger l where l.account_id = accounts.id), 0),
        pruned_spent_nano = total_spent_nano - coalesce((select sum(l.cost_nano) from ledger l where l.account_id = accounts.id and l.kind = 'usage'), 0)
      where ledger_anchor is not null`,
    )
    .execute(db);
  await sql
    .raw(
      `update keys set
        pruned_spent_nano = spent_nano - coalesce((select sum(l.cost_nano) from ledger l where l.key_id = keys.id and l.kind = 'usage'), 0),
        pruned_tokens = tokens_used - coalesce((select sum(l.input_tokens + l.output_tokens) from ledger l where l.key_id = keys.id and l.kind = 'usage'), 0)
      where account_id in (select id from accounts where ledger_anchor is not null)`,
    )
    .execute(db);
}
