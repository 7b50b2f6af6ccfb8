// Fewer indexes for every request to keep up (issue 26: CPU per request). Each row written paid for
// these, while the reads they served have cheaper paths now:
// - request_log_model and request_log_status (ADR 0023, "Indexes"): the dashboard filters by model or
//   status inside one account or key (their own indexes); an administrator's search across all
//   accounts walks the time index until a page is full.
// - ledger_time (migration 0016): it served the administrators' usage across all accounts, which
//   reads usage_hourly since migration 0017 (ADR 0027). Every settlement inserted into it.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("request_log_model").execute();
  await db.schema.dropIndex("request_log_status").execute();
  await db.schema.dropIndex("ledger_time").execute();
}
