// Balance escrow (ADR 0048, docs/billing.md "Balance escrow"): a slice of an account's available
// balance that one PostgreSQL gateway process (the holder) admits against in memory. The slice is
// counted in accounts.held_nano like a hold, so every other admission sees it as reserved and the
// account can never be overdrawn by it. expires_at: the holder's lease (epoch ms), renewed while it
// lives; a slice past it is given back by the sweeper. recall: 0 none, 1 an admission was refused for
// the balance while this slice was out (the holder is asked to give back what it does not use),
// 2 the holder gave back its unused part since. Created on SQLite too (one schema), used only on PostgreSQL.
import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("account_escrows")
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("holder", "text", (c) => c.notNull())
    .addColumn("amount_nano", "bigint", (c) => c.notNull().check(sql`amount_nano >= 0`))
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("recall", "integer", (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`recall in (0, 1, 2)`),
    )
    .addPrimaryKeyConstraint("account_escrows_pk", ["account_id", "holder"])
    .execute();
  await db.schema.createIndex("account_escrows_holder").on("account_escrows").columns(["holder", "account_id"]).execute();
}
