// The request log (docs/dashboard.md, "Requests"; ADR 0023): one row per request, answered or
// refused, written behind the request path in batches and pruned by time. No prompt or completion
// text: ids, names, numbers and the error type only. Not the ledger: rows are not chained, not
// append-only, and they go away after request_log.retention_days.
//
// Every listing is newest first by (created_at, id) with keyset paging; each filter has an index
// that ends in those two columns, so a page reads only its own rows. account_id and key_id are null
// for a request no key was attributed to (no key, an unknown key): administrators see those.
import type { ColumnDefinitionBuilder, Kysely } from "kysely";
import type { Dialect } from "../dialect.js";

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const serial = dialect === "sqlite" ? "integer" : "bigserial";
  const autoId = (c: ColumnDefinitionBuilder) => (dialect === "sqlite" ? c.primaryKey().autoIncrement() : c.primaryKey());

  await db.schema
    .createTable("request_log")
    .addColumn("id", serial, autoId)
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("request_id", "text", (c) => c.notNull())
    .addColumn("account_id", "text")
    .addColumn("key_id", "text")
    .addColumn("method", "text", (c) => c.notNull())
    .addColumn("route", "text", (c) => c.notNull())
    .addColumn("model", "text")
    .addColumn("provider", "text")
    .addColumn("deployment", "text")
    .addColumn("status", "bigint", (c) => c.notNull())
    .addColumn("error_type", "text")
    .addColumn("latency_us", "bigint", (c) => c.notNull())
    .addColumn("first_byte_us", "bigint")
    .addColumn("attempts", "bigint")
    .addColumn("input_tokens", "bigint")
    .addColumn("cached_tokens", "bigint")
    .addColumn("output_tokens", "bigint")
    .addColumn("reasoning_tokens", "bigint")
    .addColumn("cost_nano", "bigint")
    .addColumn("estimated", "bigint")
    .execute();
  const index = (name: string, columns: string[]) =>
    db.schema
      .createIndex(`request_log_${name}`)
      .on("request_log")
      .columns([...columns, "created_at", "id"])
      .execute();
  await index("time", []);
  await index("account", ["account_id"]);
  await index("key", ["key_id"]);
  await index("model", ["model"]);
  await index("status", ["status"]);
  await db.schema.createIndex("request_log_request_id").on("request_log").column("request_id").execute();
}
