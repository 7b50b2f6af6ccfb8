// What a refused request's row in the request log tells its reader (docs/dashboard.md, "Requests";
// issue 40): the error's message, and the model the client asked for, kept even when no model of
// that name exists (the model column names only a model the gateway resolved). Both bounded by the
// writer (request-log-store.ts); the message is the gateway's own, never text quoted from the
// request or from an upstream's answer, so no prompt text reaches the table.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("request_log").addColumn("error_message", "text").execute();
  await db.schema.alterTable("request_log").addColumn("requested_model", "text").execute();
}
