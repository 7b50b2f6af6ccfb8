// Sign-in and redemption attempts, counted for every process sharing the database (they were
// counted in each process's memory, so N workers allowed N times the limit). One row per attempt and
// subject ("signin:e:<email>|<ip>", "signin:i:<ip>", ...), deleted once out of the window.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("attempts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("subject", "text", (c) => c.notNull())
    .addColumn("at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("attempts_subject_at").on("attempts").columns(["subject", "at"]).execute();
  await db.schema.createIndex("attempts_at").on("attempts").column("at").execute();
}
