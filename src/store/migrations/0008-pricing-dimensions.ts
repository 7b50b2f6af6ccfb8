// The ledger stores every pricing dimension of src/core/dimensions.ts (ADR 0009): a count column for
// each dimension added since migration 0001 (cache writes by lifetime, web search calls, images, video
// seconds), a cost column for every dimension (its share of cost_nano, nano-USD: the shares of a row
// sum to its cost_nano), and cache_saving_nano (signed: what caching saved on the row, negative when
// the cache writes' premium was more than the reads saved). Rows written before this migration keep
// 0 in them: their per-dimension split was never recorded, and the ledger is append-only.
// Adding NOT NULL columns with a constant default rewrites no row (PostgreSQL 11+, SQLite), so the
// append-only triggers are untouched.
//
// The column list is frozen here (a migration never changes); a dimension added later brings its
// own migration with its two columns. On PostgreSQL the billing functions of migration 0002 that the
// gateway no longer calls (gw_admit, gw_settle, gw_release: single-operation references of gw_batch)
// are dropped: they wrote ledger rows without these columns. gw_batch and its helpers are re-created
// from their one definition (gw-batch-function.ts) by migrate.ts after every migration run.
import { sql, type ColumnDefinitionBuilder, type Kysely } from "kysely";
import type { Dialect } from "../dialect.js";

const COUNT_COLUMNS = ["cache_write_5m_tokens", "cache_write_1h_tokens", "web_search_calls", "images", "video_seconds"];
const COST_COLUMNS = [
  "input_cost_nano",
  "cached_input_cost_nano",
  "cache_write_5m_cost_nano",
  "cache_write_1h_cost_nano",
  "output_cost_nano",
  "web_search_cost_nano",
  "request_cost_nano",
  "image_cost_nano",
  "video_cost_nano",
];

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const nonNegative = (column: string) => (c: ColumnDefinitionBuilder) =>
    c
      .notNull()
      .defaultTo(0)
      .check(sql`${sql.ref(column)} >= 0`);
  for (const column of [...COUNT_COLUMNS, ...COST_COLUMNS]) await db.schema.alterTable("ledger").addColumn(column, "bigint", nonNegative(column)).execute();
  await db.schema
    .alterTable("ledger")
    .addColumn("cache_saving_nano", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  if (dialect === "postgres") {
    for (const name of ["gw_admit", "gw_settle", "gw_release"]) await sql`drop function if exists ${sql.raw(name)}`.execute(db);
  }
}
