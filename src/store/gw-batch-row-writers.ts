// The helpers gw_batch (gw-batch-function.ts) writes its hot rows with: the account, the key, the
// key's periodic counters and the account's month, each kept in variables for the call and written
// once (migration 0003). Created with gw_batch by migrate.ts (BILLING_FUNCTIONS). PL/pgSQL rather
// than SQL functions: PL/pgSQL keeps each statement's plan for the session, where a SQL function
// called from PL/pgSQL parses and plans its body on every call; measured with bench/gw-batch-ab.ts,
// that made a gw_batch call of 2 operations 13% cheaper, of 10 operations 7%.

// p_head: the hash of the account's last ledger row of the call (null: none), written here so that the
// deferred ledger_chain_head trigger finds the head already set and does not update the account row a
// second time (ledger-chain-sql.ts).
const GW_PUT_ACCOUNT = `
create or replace function gw_put_account(p_id text, p_balance bigint, p_held bigint, p_held_tokens bigint, p_spent bigint, p_head text)
returns void language plpgsql as $$ begin
  update accounts set balance_nano = p_balance, held_nano = p_held, held_tokens = p_held_tokens,
      total_spent_nano = total_spent_nano + p_spent, ledger_head = coalesce(p_head, ledger_head)
    where id = p_id;
end $$`;

/** Earlier signatures (gw_put_account without the head), dropped after gw_batch is re-created: it no longer calls them. */
export const DROP_OLD_ROW_WRITERS = [`drop function if exists gw_put_account(text, bigint, bigint, bigint, bigint)`];

const GW_PUT_KEY = `
create or replace function gw_put_key(p_id text, p_status text, p_spent bigint, p_held bigint, p_tokens_used bigint,
  p_held_tokens bigint, p_last_used bigint)
returns void language plpgsql as $$ begin
  update keys set status = p_status, spent_nano = p_spent, held_nano = p_held, tokens_used = p_tokens_used,
      held_tokens = p_held_tokens, last_used_at = coalesce(p_last_used, last_used_at)
    where id = p_id;
end $$`;

// The key's periodic counters (migration 0013), written only for a key with a period.
const GW_PUT_KEY_PERIOD = `
create or replace function gw_put_key_period(p_id text, p_started bigint, p_spent bigint, p_tokens bigint)
returns void language plpgsql as $$ begin
  update keys set period_started_at = p_started, period_spent_nano = p_spent, period_tokens_used = p_tokens
    where id = p_id;
end $$`;

const GW_ADD_MONTH = `
create or replace function gw_add_month(p_account text, p_month text, p_cost bigint, p_tokens bigint, p_requests bigint)
returns void language plpgsql as $$ begin
  insert into monthly_usage as m (account_id, month, cost_nano, tokens, requests)
    values (p_account, p_month, p_cost, p_tokens, p_requests)
    on conflict (account_id, month) do update
      set cost_nano = m.cost_nano + excluded.cost_nano, tokens = m.tokens + excluded.tokens, requests = m.requests + excluded.requests;
end $$`;

/** The helpers, created before gw_batch. */
export const ROW_WRITERS = [GW_PUT_ACCOUNT, GW_PUT_KEY, GW_PUT_KEY_PERIOD, GW_ADD_MONTH];
