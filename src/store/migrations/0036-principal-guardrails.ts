// The guardrails a key or a workspace switches on (docs/configuration.md, "Guardrails"): a JSON array
// of names from the config file's `guardrails` list whose `applies` is `selected`; null: none.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("keys").addColumn("guardrails", "text").execute();
  await db.schema.alterTable("workspaces").addColumn("guardrails", "text").execute();
}
