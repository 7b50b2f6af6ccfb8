// Tags on requests and budgets on tags (docs/billing.md, "Tags and tag budgets"; issue 41 item 3).
// - keys.default_tags: the key's default tags, a JSON object {key: value}; null: none.
// - holds.tags: the request's tags ("key=value" texts, JSON array), so that a hold rebuilt from the
//   database (a video task settled by another process) still tags its ledger row; null: none.
// - ledger_tags: one row per tag of a charged ledger row, written in the settlement's transaction.
//   A child table rather than a ledger column, so that a breakdown by tag reads an index
//   (tag, created_at) or (account_id, created_at) and sums cost and tokens kept on the row, and so
//   that the ledger's hash chain (its columns and `admin ledger verify`) stays as it is: tags are an
//   annotation of the row, not part of what the chain proves.
// - tag_budgets: the monthly USD and token budgets on a tag, gateway-wide (account_id null) or for
//   one account; `scope` is the budget scope's name (core/request-tags.ts tagScope), its counters in
//   budget_usage (migration 0029) like a workspace's.
// - request_log.tags: the request's tags as "key=value" texts, comma-separated (not prompt text).
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("keys").addColumn("default_tags", "text").execute();
  await db.schema.alterTable("holds").addColumn("tags", "text").execute();
  await db.schema.alterTable("request_log").addColumn("tags", "text").execute();
  await db.schema
    .createTable("ledger_tags")
    .addColumn("ledger_id", "bigint", (c) => c.notNull())
    .addColumn("tag", "text", (c) => c.notNull())
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("cost_nano", "bigint", (c) => c.notNull())
    .addColumn("tokens", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("ledger_tags_pk", ["ledger_id", "tag"])
    .execute();
  await db.schema.createIndex("ledger_tags_tag_time").on("ledger_tags").columns(["tag", "created_at"]).execute();
  await db.schema.createIndex("ledger_tags_account_time").on("ledger_tags").columns(["account_id", "created_at"]).execute();
  await db.schema
    .createTable("tag_budgets")
    .addColumn("scope", "text", (c) => c.primaryKey())
    .addColumn("tag", "text", (c) => c.notNull())
    .addColumn("account_id", "text")
    .addColumn("monthly_budget_nano", "bigint")
    .addColumn("monthly_token_budget", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
}
