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
// Unchanged: the checks and their order and answers (gw_admit and gw_settle in migration 0002 remain
// the single-operation reference and are what this loop computes); the lock order (account, then its
// keys); atomicity — the batch is one statement, so an error anywhere (a CHECK when the rows are
// written, a trigger, GW409) rolls all of it back and the batcher runs each operation again alone,
// each getting its own answer or error. Refusals and replays write nothing.
//
// gw_batch itself is defined once, in gw-batch-function.ts, as it is now: this migration and every
// later one that changes it (0007: the ledger's deployment) create it from there.
import { sql, type Kysely } from "kysely";
import type { Dialect } from "../dialect.js";
import { GW_BATCH } from "./gw-batch-function.js";

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect !== "postgres") return;
  for (const statement of FUNCTIONS) await sql.raw(statement).execute(db);
}

const GW_PUT_ACCOUNT = `
create or replace function gw_put_account(p_id text, p_balance bigint, p_held bigint, p_held_tokens bigint, p_spent bigint)
returns void language sql as $$
  update accounts set balance_nano = p_balance, held_nano = p_held, held_tokens = p_held_tokens,
      total_spent_nano = total_spent_nano + p_spent
    where id = p_id
$$`;

const GW_PUT_KEY = `
create or replace function gw_put_key(p_id text, p_status text, p_spent bigint, p_held bigint, p_tokens_used bigint,
  p_held_tokens bigint, p_last_used bigint)
returns void language sql as $$
  update keys set status = p_status, spent_nano = p_spent, held_nano = p_held, tokens_used = p_tokens_used,
      held_tokens = p_held_tokens, last_used_at = coalesce(p_last_used, last_used_at)
    where id = p_id
$$`;

const GW_ADD_MONTH = `
create or replace function gw_add_month(p_account text, p_month text, p_cost bigint, p_tokens bigint, p_requests bigint)
returns void language sql as $$
  insert into monthly_usage as m (account_id, month, cost_nano, tokens, requests)
    values (p_account, p_month, p_cost, p_tokens, p_requests)
    on conflict (account_id, month) do update
      set cost_nano = m.cost_nano + excluded.cost_nano, tokens = m.tokens + excluded.tokens, requests = m.requests + excluded.requests
$$`;

const FUNCTIONS = [GW_PUT_ACCOUNT, GW_PUT_KEY, GW_ADD_MONTH, GW_BATCH];
