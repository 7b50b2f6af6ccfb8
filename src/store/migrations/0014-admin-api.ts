// The admin API (docs/operations.md, "Admin API"; ADR 0019): admin tokens, the append-only audit log
// and the idempotency records of admin writes.
//
// admin_tokens: like API keys, only the SHA-256 of the token is stored; scopes are a space-separated
// list checked by the routes. A revoked token keeps its row (the audit log names it).
//
// audit_log: one row per administrative change, written in the transaction of the change. It is
// append-only the way the ledger is (migrations 0001 and 0005): UPDATE and DELETE are refused by a
// trigger on both databases, TRUNCATE by a statement trigger on PostgreSQL, and on SQLite a BEFORE
// INSERT trigger refuses a row whose id exists already (INSERT OR REPLACE would otherwise delete the
// old row without firing the DELETE trigger).
//
// admin_idempotency: an Idempotency-Key with the hash of the request it was first used with and the
// response that request got, written in the transaction of the change it guards.
import { sql, type ColumnDefinitionBuilder, type Kysely } from "kysely";
import type { Dialect } from "../dialect.js";

/** The message of the refusals; tests and docs name it. */
export const AUDIT_APPEND_ONLY = "audit_log rows are append-only";

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const serial = dialect === "sqlite" ? "integer" : "bigserial";
  const autoId = (c: ColumnDefinitionBuilder) => (dialect === "sqlite" ? c.primaryKey().autoIncrement() : c.primaryKey());

  await db.schema
    .createTable("admin_tokens")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("prefix", "text", (c) => c.notNull())
    .addColumn("hash", "text", (c) => c.notNull().unique())
    .addColumn("scopes", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("revoked_at", "bigint")
    .execute();

  await db.schema
    .createTable("audit_log")
    .addColumn("id", serial, autoId)
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("actor_type", "text", (c) => c.notNull().check(sql`actor_type in ('admin_token', 'dashboard', 'cli')`))
    .addColumn("actor_id", "text")
    .addColumn("actor_name", "text")
    .addColumn("action", "text", (c) => c.notNull())
    .addColumn("target_type", "text", (c) => c.notNull())
    .addColumn("target_id", "text", (c) => c.notNull())
    .addColumn("before", "text")
    .addColumn("after", "text")
    .addColumn("client_address", "text")
    .addColumn("request_id", "text")
    .execute();
  await db.schema.createIndex("audit_log_target").on("audit_log").columns(["target_id", "id"]).execute();
  await db.schema.createIndex("audit_log_actor").on("audit_log").columns(["actor_id", "id"]).execute();
  await db.schema.createIndex("audit_log_action").on("audit_log").columns(["action", "id"]).execute();

  await db.schema
    .createTable("admin_idempotency")
    .addColumn("key", "text", (c) => c.primaryKey())
    .addColumn("request_hash", "text", (c) => c.notNull())
    .addColumn("status", "bigint")
    .addColumn("response", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();

  if (dialect === "sqlite") {
    await sql`create trigger audit_log_no_update before update on audit_log begin select raise(abort, ${sql.lit(AUDIT_APPEND_ONLY)}); end`.execute(db);
    await sql`create trigger audit_log_no_delete before delete on audit_log begin select raise(abort, ${sql.lit(AUDIT_APPEND_ONLY)}); end`.execute(db);
    await sql`create trigger audit_log_no_replace before insert on audit_log
      when exists (select 1 from audit_log where id = new.id)
      begin select raise(abort, ${sql.lit(AUDIT_APPEND_ONLY)}); end`.execute(db);
    return;
  }
  await sql`create function audit_log_guard() returns trigger language plpgsql as $$
      begin
        raise exception ${sql.lit(`${AUDIT_APPEND_ONLY}: %`)}, tg_op;
      end $$`.execute(db);
  await sql`create trigger audit_log_guard before update or delete on audit_log for each row execute function audit_log_guard()`.execute(db);
  await sql`create trigger audit_log_no_truncate before truncate on audit_log for each statement execute function audit_log_guard()`.execute(db);
}
