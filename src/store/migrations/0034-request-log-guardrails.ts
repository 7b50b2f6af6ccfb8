// Each guardrail decision a request met (docs/configuration.md, "Guardrails"): which guardrail, on
// which side, and what it did ("request:secrets:mask,response:pii:block"), never the text it matched.
// Bounded by the writer (request-log-store.ts).
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("request_log").addColumn("guardrails", "text").execute();
}
