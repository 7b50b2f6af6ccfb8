// Budgets of a workspace and of its members (docs/billing.md, "Workspace and member budgets";
// ADR 0037). A budget is a *scope*: "workspace:<id>" or "member:<workspace>:<account>".
// - workspaces: the monthly budgets (USD and tokens), the per-member monthly USD budget and the
//   allowed-models list (JSON array of model ids); null: none. Read with the key at authentication.
// - budget_usage: one row per scope: the UTC month its settled cost and tokens belong to (a counter of
//   an earlier month counts as 0 and a settlement in a new month starts it afresh), and what holds in
//   flight reserve. Written only by admission, settlement and release: on SQLite by the single writer,
//   on PostgreSQL by gw_batch, which locks a batch's scope rows (in scope order) before any account row.
// - holds.budgets: the scopes a hold reserved in (JSON array of text), so that whoever ends the hold
//   gives each its reservation back exactly once; null: none.
// Nullable columns without a default rewrite no row on either database.
import { sql, type Kysely } from "kysely";
import type { Dialect } from "../dialect.js";

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema.alterTable("workspaces").addColumn("monthly_budget_nano", "bigint").execute();
  await db.schema.alterTable("workspaces").addColumn("monthly_token_budget", "bigint").execute();
  await db.schema.alterTable("workspaces").addColumn("member_monthly_budget_nano", "bigint").execute();
  await db.schema.alterTable("workspaces").addColumn("allowed_models", "text").execute();
  await db.schema.alterTable("holds").addColumn("budgets", "text").execute();
  let create = db.schema
    .createTable("budget_usage")
    .addColumn("scope", "text", (c) => c.primaryKey())
    .addColumn("month", "text", (c) => c.notNull())
    .addColumn("cost_nano", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("tokens", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("held_nano", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("held_tokens", "bigint", (c) => c.notNull().defaultTo(0));
  // SQLite: the row lives in the primary-key b-tree (one page per write, as traffic_windows: migration 0012).
  if (dialect === "sqlite") create = create.modifyEnd(sql`without rowid`);
  await create.execute();
}
