// PostgreSQL: gw_batch keeps the rows a batch works on in variables and writes each once.
//
// Why: under load every operation of a batch was the same hot rows again — each admission locked and
// updated the account and key rows, each settlement the account, key and monthly-usage rows. Within
// one transaction every such UPDATE adds a row version that the next statement must find, and the
// statements themselves were most of PostgreSQL's CPU per request (measured: ~55 µs of ~100 µs per
// operation at 64 per batch), which on a 2-core machine is CPU the gateway needs.
//
// Now: operations arrive sorted by account, then key (postgres-batcher.ts). For each run of one
// account the batch locks the account row once (SELECT … FOR UPDATE, as gw_admit does), keeps balance,
// held amounts and spend in variables, locks each key row once when an operation first needs it, and
// applies every admission check and settlement to those variables in the batch's order, so each
// operation sees exactly what it would have seen had the operations before it run as separate calls.
// The rows are written once, when the batch moves to another account or key and at the end: the
// account and key rows by gw_put_account / gw_put_key (absolute values, under the row lock), monthly
// usage by one upsert of the batch's sums per account and month. Holds and ledger rows are still one
// INSERT or DELETE per operation (the ledger's ON CONFLICT (request_id) keeps settlement idempotent).
//
// Unchanged: the checks and their order and answers (those of gw_admit and gw_settle of migration 0002,
// the single-operation functions migration 0008 dropped); the lock order (account, then its
// keys); atomicity — the batch is one statement, so an error anywhere (a CHECK when the rows are
// written, a trigger, GW409) rolls all of it back and the batcher runs each operation again alone,
// each getting its own answer or error. Refusals and replays write nothing.
//
// The functions are defined once, in gw-batch-function.ts (gw_batch) and gw-batch-row-writers.ts (gw_put_account, gw_put_key,
// gw_add_month), and migrate.ts creates them from there after every migration run (ADR 0009); this
// migration no longer creates them itself: nothing calls them before the migration run ends.
export async function up(): Promise<void> {
  // Nothing: see above.
}
