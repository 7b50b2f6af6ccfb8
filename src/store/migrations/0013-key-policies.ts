// Key policies (docs/decisions/0017-key-policies.md): allowed models, an expiry time, allowed client
// networks and a periodic budget, on the keys row. Every column is nullable or has a constant default,
// so adding them rewrites no row on either database.
// - allowed_models, allowed_networks: JSON arrays of text (null: no restriction);
// - expires_at: epoch ms (null: never); the stored status (enabled/exhausted/revoked) is not touched;
// - period ('day' | 'week' | 'month', UTC) with period_budget_nano and/or period_token_cap, and the
//   counters of the period that began at period_started_at (epoch ms). A counter whose start lies
//   before the current period's start counts as 0; the next settlement resets it.
// On PostgreSQL, gw_batch (gw-batch-function.ts, re-created by migrate.ts after every run) reads and
// writes the period columns.
import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("keys").addColumn("allowed_models", "text").execute();
  await db.schema.alterTable("keys").addColumn("allowed_networks", "text").execute();
  await db.schema.alterTable("keys").addColumn("expires_at", "bigint").execute();
  await db.schema
    .alterTable("keys")
    .addColumn("period", "text", (c) => c.check(sql`period is null or period in ('day', 'week', 'month')`))
    .execute();
  await db.schema
    .alterTable("keys")
    .addColumn("period_budget_nano", "bigint", (c) => c.check(sql`period_budget_nano is null or period_budget_nano >= 0`))
    .execute();
  await db.schema
    .alterTable("keys")
    .addColumn("period_token_cap", "bigint", (c) => c.check(sql`period_token_cap is null or period_token_cap >= 0`))
    .execute();
  await db.schema
    .alterTable("keys")
    .addColumn("period_started_at", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable("keys")
    .addColumn("period_spent_nano", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable("keys")
    .addColumn("period_tokens_used", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
}
