// The whole schema of the contract (docs/api-contract.md) in one migration, written once for both databases. The database
// itself enforces ranges, enums, non-negative counters, uniqueness and ledger immutability.
import { sql, type ColumnDefinitionBuilder, type Kysely } from "kysely";
import type { Dialect } from "../dialect.js";

type Db = Kysely<unknown>;
const DAY_MS = 86_400_000;
// Written into the schema's CHECKs and triggers, so frozen here (a migration never changes): the code's
// copies are MAX_BALANCE and MAX_TOTAL_SPENT (core/money.ts) and LEDGER_RETENTION_MS (ledger-store.ts).
export const LEDGER_RETENTION_MS = 365 * DAY_MS;
/** 1,000,000.00 USD in nano-USD. */
export const MAX_BALANCE = 1_000_000_000_000_000n;
/** 999,999,999.99 USD in nano-USD. */
export const MAX_TOTAL_SPENT = 999_999_999_990_000_000n;

const nonNegative = (column: string) => (c: ColumnDefinitionBuilder) =>
  c
    .notNull()
    .defaultTo(0)
    .check(sql`${sql.ref(column)} >= 0`);
const optionalNonNegative = (column: string) => (c: ColumnDefinitionBuilder) => c.check(sql`${sql.ref(column)} >= 0`);
const oneOf = (column: string, values: string[]) => (c: ColumnDefinitionBuilder) => c.notNull().check(sql`${sql.ref(column)} in (${sql.join(values.map((v) => sql.lit(v)))})`);
const flag = (column: string) => (c: ColumnDefinitionBuilder) =>
  c
    .notNull()
    .defaultTo(0)
    .check(sql`${sql.ref(column)} in (0, 1)`);

export async function up(db: Db, dialect: Dialect): Promise<void> {
  const serial = dialect === "sqlite" ? "integer" : "bigserial";
  const autoId = (c: ColumnDefinitionBuilder) => (dialect === "sqlite" ? c.primaryKey().autoIncrement() : c.primaryKey());

  await db.schema
    .createTable("accounts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("email", "text", (c) => c.notNull().unique())
    .addColumn("password_hash", "text")
    .addColumn("status", "text", oneOf("status", ["active", "suspended", "closed"]))
    .addColumn("tier", "text", (c) => c.notNull())
    .addColumn("is_admin", "bigint", flag("is_admin"))
    .addColumn("balance_nano", "bigint", (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`balance_nano >= 0 and balance_nano <= ${sql.lit(MAX_BALANCE.toString())}`),
    )
    .addColumn("total_spent_nano", "bigint", (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`total_spent_nano >= 0 and total_spent_nano <= ${sql.lit(MAX_TOTAL_SPENT.toString())}`),
    )
    .addColumn("held_nano", "bigint", nonNegative("held_nano"))
    .addColumn("held_tokens", "bigint", nonNegative("held_tokens"))
    .addColumn("monthly_budget_nano", "bigint", optionalNonNegative("monthly_budget_nano"))
    .addColumn("monthly_token_budget", "bigint", optionalNonNegative("monthly_token_budget"))
    .addColumn("default_model", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("workspaces")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("created_by", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("keys")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("workspace_id", "text", (c) => c.references("workspaces.id").onDelete("set null"))
    .addColumn("name", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("prefix", "text", (c) => c.notNull())
    .addColumn("hash", "text", (c) => c.notNull().unique())
    .addColumn("status", "text", oneOf("status", ["enabled", "exhausted", "revoked"]))
    .addColumn("budget_cap_nano", "bigint", optionalNonNegative("budget_cap_nano"))
    .addColumn("spent_nano", "bigint", nonNegative("spent_nano"))
    .addColumn("token_cap", "bigint", optionalNonNegative("token_cap"))
    .addColumn("tokens_used", "bigint", nonNegative("tokens_used"))
    .addColumn("held_nano", "bigint", nonNegative("held_nano"))
    .addColumn("held_tokens", "bigint", nonNegative("held_tokens"))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addColumn("revoked_at", "bigint")
    .addColumn("last_used_at", "bigint")
    .execute();
  await db.schema.createIndex("keys_account_status").on("keys").columns(["account_id", "status"]).execute();
  await db.schema.createIndex("keys_workspace").on("keys").column("workspace_id").execute();

  // No foreign key to keys: allocations are history and outlive a permanently deleted key.
  await db.schema
    .createTable("key_allocations")
    .addColumn("id", serial, autoId)
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("budget_cap_nano", "bigint", optionalNonNegative("budget_cap_nano"))
    .addColumn("token_cap", "bigint", optionalNonNegative("token_cap"))
    .addColumn("reason", "text", (c) => c.notNull())
    .addColumn("actor_account_id", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("key_allocations_key").on("key_allocations").column("key_id").execute();

  // No foreign keys either: ledger rows must survive the deletion of anything they mention.
  await db.schema
    .createTable("ledger")
    .addColumn("id", serial, autoId)
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("key_id", "text")
    .addColumn("request_id", "text", (c) => c.notNull().unique())
    .addColumn("kind", "text", oneOf("kind", ["usage", "credit", "debit"]))
    .addColumn("model", "text")
    .addColumn("provider", "text")
    .addColumn("route", "text")
    .addColumn("input_tokens", "bigint", nonNegative("input_tokens"))
    .addColumn("cached_tokens", "bigint", nonNegative("cached_tokens"))
    .addColumn("output_tokens", "bigint", nonNegative("output_tokens"))
    .addColumn("reasoning_tokens", "bigint", nonNegative("reasoning_tokens"))
    .addColumn("cost_nano", "bigint", nonNegative("cost_nano"))
    .addColumn("estimated", "bigint", flag("estimated"))
    .addColumn("note", "text")
    .execute();
  await db.schema.createIndex("ledger_key_time").on("ledger").columns(["key_id", "created_at"]).execute();
  await db.schema.createIndex("ledger_account_time").on("ledger").columns(["account_id", "created_at"]).execute();

  await db.schema
    .createTable("monthly_usage")
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("month", "text", (c) => c.notNull())
    .addColumn("cost_nano", "bigint", nonNegative("cost_nano"))
    .addColumn("tokens", "bigint", nonNegative("tokens"))
    .addColumn("requests", "bigint", nonNegative("requests"))
    .addPrimaryKeyConstraint("monthly_usage_pk", ["account_id", "month"])
    .execute();

  await db.schema
    .createTable("holds")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("key_id", "text")
    .addColumn("request_id", "text", (c) => c.notNull().unique())
    .addColumn("amount_nano", "bigint", nonNegative("amount_nano"))
    .addColumn("tokens", "bigint", nonNegative("tokens"))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("holds_expiry").on("holds").column("expires_at").execute();

  await db.schema
    .createTable("upstream_keys")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("label", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("ciphertext", "text", (c) => c.notNull())
    .addColumn("fingerprint", "text", (c) => c.notNull())
    .addColumn("last4", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addUniqueConstraint("upstream_keys_unique", ["account_id", "provider", "fingerprint"])
    .execute();

  await db.schema
    .createTable("memberships")
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id").onDelete("cascade"))
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("role", "text", oneOf("role", ["owner", "admin", "member"]))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("memberships_pk", ["workspace_id", "account_id"])
    .execute();
  await db.schema.createIndex("memberships_account").on("memberships").column("account_id").execute();

  await db.schema
    .createTable("invites")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id").onDelete("cascade"))
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("role", "text", oneOf("role", ["admin", "member"]))
    .addColumn("email", "text")
    .addColumn("created_by", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("used_at", "bigint")
    .addColumn("used_by", "text")
    .execute();

  await db.schema
    .createTable("sessions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("csrf_token", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("show_again_tokens")
    .addColumn("token_hash", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("key_id", "text", (c) => c.notNull().references("keys.id").onDelete("cascade"))
    .addColumn("ciphertext", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("video_tasks")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("request_id", "text", (c) => c.notNull().unique())
    .addColumn("model", "text", (c) => c.notNull())
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("upstream_key_ciphertext", "text", (c) => c.notNull())
    .addColumn("upstream_task_id", "text", (c) => c.notNull())
    .addColumn("status", "text", oneOf("status", ["queued", "in_progress", "completed", "failed", "expired"]))
    .addColumn("progress", "bigint", (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`progress >= 0 and progress <= 100`),
    )
    .addColumn("seconds", "bigint", optionalNonNegative("seconds"))
    .addColumn("size", "text")
    .addColumn("error_message", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addColumn("last_polled_at", "bigint")
    .addColumn("completed_at", "bigint")
    .execute();
  await db.schema.createIndex("video_tasks_account").on("video_tasks").columns(["account_id", "created_at"]).execute();

  await db.schema
    .createTable("stored_responses")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("body", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("stored_responses_expiry").on("stored_responses").column("expires_at").execute();

  // Other gateway processes poll this to drop cached keys within a second of a revoke.
  await db.schema
    .createTable("auth_events")
    .addColumn("seq", serial, autoId)
    .addColumn("key_hash", "text")
    .addColumn("account_id", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();

  for (const statement of dialect === "sqlite" ? sqliteGuards() : postgresGuards()) await statement.execute(db);
}

// The ledger is append-only; rows younger than 365 days cannot be deleted; total spend never falls.
function sqliteGuards() {
  const nowMs = sql`(cast(strftime('%s', 'now') as integer) * 1000)`;
  return [
    sql`create trigger ledger_no_update before update on ledger
        begin select raise(abort, 'ledger rows are append-only'); end`,
    sql`create trigger ledger_retention before delete on ledger
        when old.created_at > ${nowMs} - ${sql.lit(LEDGER_RETENTION_MS)}
        begin select raise(abort, 'ledger_retention_violation: ledger rows are kept 365 days'); end`,
    sql`create trigger total_spent_monotonic before update of total_spent_nano on accounts
        when new.total_spent_nano < old.total_spent_nano
        begin select raise(abort, 'balance_invariant: total_spent_nano never decreases'); end`,
  ];
}

function postgresGuards() {
  return [
    sql`create function ledger_guard() returns trigger language plpgsql as $$
        begin
          if tg_op = 'UPDATE' then
            raise exception 'ledger rows are append-only';
          end if;
          if old.created_at > (extract(epoch from clock_timestamp()) * 1000)::bigint - ${sql.lit(LEDGER_RETENTION_MS)} then
            raise exception 'ledger_retention_violation: ledger rows are kept 365 days';
          end if;
          return old;
        end $$`,
    sql`create trigger ledger_guard before update or delete on ledger for each row execute function ledger_guard()`,
    sql`create function total_spent_guard() returns trigger language plpgsql as $$
        begin
          if new.total_spent_nano < old.total_spent_nano then
            raise exception 'balance_invariant: total_spent_nano never decreases';
          end if;
          return new;
        end $$`,
    sql`create trigger total_spent_monotonic before update of total_spent_nano on accounts
        for each row execute function total_spent_guard()`,
  ];
}
