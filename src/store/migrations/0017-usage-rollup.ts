// usage_hourly: the ledger's usage rows summed per key, UTC hour, account, model and provider, so that
// /v1/usage and the dashboard's usage views read a few hundred rollup rows instead of every ledger row
// of the window (docs/storage.md, "Usage rollup"; ADR 0027). Issue 26: a key with a million rows in a
// month answered /v1/usage in seconds; from the rollup it is milliseconds at any ledger size.
//
// The database maintains it, by triggers on the ledger, in the statement that inserts (or deletes) the
// ledger row: every path that appends a usage row (SQLite settlement, gw_batch, credits, hand-written
// SQL) is covered without knowing it, and a rollup row can never disagree with the committed ledger
// (same transaction; a rolled-back insert takes its rollup change with it). A delete (`ledger prune`,
// rows older than 365 days) subtracts the row again and drops a rollup row that reaches 0 requests,
// so the rollup is exactly the ledger's sums for every hour, pruned or not.
//
// No NULLs in the key: a usage row without a key, model or provider is summed under '' (readers map
// it back to null). The summed columns are frozen here like any migration's, and the trigger SQL is
// built from them by dimension-sql.ts; a dimension added later adds its columns to usage_hourly and
// re-creates the triggers in its own migration (addDimensionColumns), and
// test/storage/usage-rollup.test.ts fails while usage_hourly's columns and SUMMED_COLUMNS differ.
//
// ledger_account_chain (account_id, id) on SQLite too: the ledger page and the CSV, newest first by id,
// sorted all of an account's rows on SQLite without it (PostgreSQL has it since migration 0010).
//
// Existing ledger rows are summed into the table in this migration's transaction, after the triggers
// exist: on PostgreSQL CREATE TRIGGER holds a lock on the ledger that blocks inserts until commit, on
// SQLite the write lock does, so no row is counted twice or missed.
import { sql, type Kysely } from "kysely";
import type { Dialect } from "../dialect.js";
import { ROLLUP_GROUP_COLUMNS, rollupBackfillSql, rollupTriggerSql } from "../dimension-sql.js";

/** The ledger columns usage_hourly sums (usage-report.ts SUMMED_COLUMNS at this migration; frozen). */
export const ROLLUP_SUMMED_COLUMNS = [
  "input_tokens",
  "cached_tokens",
  "output_tokens",
  "reasoning_tokens",
  "cost_nano",
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
] as const;

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  let table = db.schema
    .createTable("usage_hourly")
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("hour", "bigint", (c) => c.notNull())
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("model", "text", (c) => c.notNull())
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("requests", "bigint", (c) => c.notNull());
  for (const column of ROLLUP_SUMMED_COLUMNS) table = table.addColumn(column, "bigint", (c) => c.notNull().defaultTo(0));
  table = table.addPrimaryKeyConstraint("usage_hourly_pk", [...ROLLUP_GROUP_COLUMNS]);
  // SQLite: the primary key is the table (one b-tree, the sums in its leaves). PostgreSQL: room on each
  // page for the updated version of a row (a HOT update: the indexes are not touched).
  await (dialect === "sqlite" ? table.modifyEnd(sql`without rowid`) : table.modifyEnd(sql`with (fillfactor = 70)`)).execute();
  // The dashboard's account view, and the administrators' view across accounts.
  await db.schema.createIndex("usage_hourly_account").on("usage_hourly").columns(["account_id", "hour"]).execute();
  await db.schema.createIndex("usage_hourly_hour").on("usage_hourly").column("hour").execute();

  for (const statement of rollupTriggerSql(dialect, ROLLUP_SUMMED_COLUMNS, { replace: false })) await sql.raw(statement).execute(db);
  if (dialect === "postgres") {
    await sql`create trigger ledger_usage_rollup after insert on ledger for each row when (new.kind = 'usage') execute function ledger_usage_rollup()`.execute(db);
    await sql`create trigger ledger_usage_unroll after delete on ledger for each row when (old.kind = 'usage') execute function ledger_usage_unroll()`.execute(db);
  }
  await sql.raw(rollupBackfillSql(ROLLUP_SUMMED_COLUMNS)).execute(db);
  // The ledger page and the CSV read an account's rows newest first by id: PostgreSQL has had this
  // index since 0010 (the chain's previous row); on SQLite they sorted the account's rows instead.
  await sql`create index if not exists ledger_account_chain on ledger (account_id, id)`.execute(db);
}
