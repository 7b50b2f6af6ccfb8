// PostgreSQL: the per-request billing operations as PL/pgSQL functions, so that admission, settlement
// and release each run inside ONE statement in autocommit: one round trip, and the hot account row is
// locked for the duration of one call instead of across 4–7 round trips between BEGIN and COMMIT.
// The gateway sends them through gw_batch (below): the operations that queue up in one process while
// a batch is in flight go together in one call, one transaction, one commit (group commit; see
// src/billing/postgres-batcher.ts). A function call is atomic: an error inside (a CHECK, a trigger,
// a unique violation) rolls back everything the call did. SQLite has no stored procedures; there the
// same logic is precompiled SQL in src/billing/*-sqlite.ts and this migration does nothing.
//
// The semantics are those documented in src/billing/admission.ts, settlement.ts and holds.ts:
// - gw_admit: order of checks (status, monthly budget, balance, key budget cap, key token cap), lock
//   order account row then key row, refusals change nothing. Rows are locked with SELECT … FOR UPDATE
//   and checked before anything is written, so a refusal returns a code and writes nothing; monthly
//   usage is read by a statement after the account lock (a fresh READ COMMITTED snapshot in a volatile
//   function), so it sees every settlement that committed before the lock. Returns outcome 'ok' or the
//   refusal code, and a detail (the account status, or the available balance) for the message.
// - gw_settle: deletes the hold (the per-request mutex, as before), locks the account row, appends the
//   ledger row (ON CONFLICT (request_id) DO NOTHING: idempotent by request id) with the shortfall note,
//   then updates account, key (exhaustion at a cap) and monthly usage. A replay changes nothing: when
//   the ledger row already exists and no hold was deleted, nothing was written and it returns
//   recorded=false with the recorded cost; when a hold WAS deleted it raises SQLSTATE GW409 so the call
//   rolls back whole (the TypeScript side maps that to the same replay answer).
// - gw_release: deletes the hold (optionally only when expired) and gives its reservation back.
import { sql, type Kysely } from "kysely";
import type { Dialect } from "../dialect.js";

/** SQLSTATE raised by gw_settle when a replay had to undo its own hold deletion. */
export const ALREADY_SETTLED_SQLSTATE = "GW409";

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect !== "postgres") return;
  for (const statement of FUNCTIONS) await sql.raw(statement).execute(db);
}

const GW_ADMIT = `
create or replace function gw_admit(
  p_account text, p_key text, p_request text, p_hold text, p_amount bigint, p_tokens bigint,
  p_month text, p_created bigint, p_expires bigint, out outcome text, out detail text)
language plpgsql as $$
declare
  a record;
  k record;
  used_cost bigint := 0;
  used_tokens bigint := 0;
begin
  select status, balance_nano, held_nano, held_tokens, monthly_budget_nano, monthly_token_budget
    into a from accounts where id = p_account for update;
  if not found then outcome := 'no_account'; return; end if;
  if a.status <> 'active' then outcome := 'account_suspended'; detail := a.status; return; end if;
  if a.monthly_budget_nano is not null or a.monthly_token_budget is not null then
    select m.cost_nano, m.tokens into used_cost, used_tokens from monthly_usage m where m.account_id = p_account and m.month = p_month;
    if not found then used_cost := 0; used_tokens := 0; end if;
    if (a.monthly_budget_nano is not null and used_cost + a.held_nano + p_amount > a.monthly_budget_nano)
       or (a.monthly_token_budget is not null and used_tokens + a.held_tokens + p_tokens > a.monthly_token_budget) then
      outcome := 'monthly_budget_exceeded'; return;
    end if;
  end if;
  if a.balance_nano - a.held_nano < p_amount then
    outcome := 'insufficient_balance'; detail := (a.balance_nano - a.held_nano)::text; return;
  end if;
  select account_id, status, budget_cap_nano, spent_nano, held_nano, token_cap, tokens_used, held_tokens
    into k from keys where id = p_key and account_id = p_account for update;
  -- Another account's key is not even locked: batches lock rows in account order (postgres-batcher.ts).
  if not found or k.status = 'revoked' then outcome := 'auth_error'; return; end if;
  if k.status = 'exhausted' then
    if k.budget_cap_nano is not null and k.spent_nano >= k.budget_cap_nano then outcome := 'key_budget_exceeded';
    elsif k.token_cap is not null and k.tokens_used >= k.token_cap then outcome := 'key_token_cap_exceeded';
    else outcome := 'key_budget_exceeded';
    end if;
    return;
  end if;
  if k.budget_cap_nano is not null and k.spent_nano + k.held_nano + p_amount > k.budget_cap_nano then
    outcome := 'key_budget_exceeded'; return;
  end if;
  if k.token_cap is not null and k.tokens_used + k.held_tokens + p_tokens > k.token_cap then
    outcome := 'key_token_cap_exceeded'; return;
  end if;
  update accounts set held_nano = held_nano + p_amount, held_tokens = held_tokens + p_tokens where id = p_account;
  update keys set held_nano = held_nano + p_amount, held_tokens = held_tokens + p_tokens where id = p_key;
  insert into holds (id, account_id, key_id, request_id, amount_nano, tokens, created_at, expires_at)
    values (p_hold, p_account, p_key, p_request, p_amount, p_tokens, p_created, p_expires);
  outcome := 'ok';
end $$`;

const GW_SETTLE = `
create or replace function gw_settle(
  p_hold text, p_account text, p_key text, p_request text, p_cost bigint, p_tokens bigint,
  p_now bigint, p_month text, p_model text, p_provider text, p_route text,
  p_input bigint, p_cached bigint, p_output bigint, p_reasoning bigint, p_estimated bigint,
  out o_recorded boolean, out o_cost bigint)
language plpgsql as $$
declare
  h_amount bigint;
  h_tokens bigint;
  released boolean;
  v_balance bigint;
  v_collected bigint;
  v_ledger bigint;
begin
  delete from holds where id = p_hold returning amount_nano, tokens into h_amount, h_tokens;
  released := found;
  if not released then h_amount := 0; h_tokens := 0; end if;
  select balance_nano into v_balance from accounts where id = p_account for update;
  if not found then raise exception 'account % does not exist', p_account; end if;
  v_collected := least(v_balance, p_cost);
  insert into ledger (created_at, account_id, key_id, request_id, kind, model, provider, route,
      input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost_nano, estimated, note)
    values (p_now, p_account, p_key, p_request, 'usage', p_model, p_provider, p_route,
      p_input, p_cached, p_output, p_reasoning, p_cost, p_estimated,
      case when p_cost > v_collected then 'shortfall_nano=' || (p_cost - v_collected)::text end)
    on conflict (request_id) do nothing
    returning id into v_ledger;
  if v_ledger is null then
    if released then raise exception 'request % already settled', p_request using errcode = '${ALREADY_SETTLED_SQLSTATE}'; end if;
    o_recorded := false;
    select l.cost_nano into o_cost from ledger l where l.request_id = p_request;
    return;
  end if;
  update accounts set balance_nano = balance_nano - v_collected, total_spent_nano = total_spent_nano + p_cost,
      held_nano = held_nano - h_amount, held_tokens = held_tokens - h_tokens
    where id = p_account;
  -- SET expressions all read the row as it was before this UPDATE, hence "spent_nano + p_cost".
  update keys set spent_nano = spent_nano + p_cost, tokens_used = tokens_used + p_tokens,
      held_nano = held_nano - h_amount, held_tokens = held_tokens - h_tokens, last_used_at = p_now,
      status = case when status = 'enabled' and (
          (budget_cap_nano is not null and spent_nano + p_cost >= budget_cap_nano) or
          (token_cap is not null and tokens_used + p_tokens >= token_cap)
        ) then 'exhausted' else status end
    where id = p_key;
  insert into monthly_usage as m (account_id, month, cost_nano, tokens, requests)
    values (p_account, p_month, p_cost, p_tokens, 1)
    on conflict (account_id, month) do update
      set cost_nano = m.cost_nano + excluded.cost_nano, tokens = m.tokens + excluded.tokens, requests = m.requests + excluded.requests;
  o_recorded := true;
  o_cost := p_cost;
end $$`;

const GW_RELEASE = `
create or replace function gw_release(p_hold text, p_expired_before bigint, out released boolean)
language plpgsql as $$
declare
  h record;
begin
  delete from holds where id = p_hold and (p_expired_before is null or expires_at <= p_expired_before)
    returning account_id, key_id, amount_nano, tokens into h;
  released := found;
  if not released then return; end if;
  update accounts set held_nano = held_nano - h.amount_nano, held_tokens = held_tokens - h.tokens where id = h.account_id;
  if h.key_id is not null then
    update keys set held_nano = held_nano - h.amount_nano, held_tokens = held_tokens - h.tokens where id = h.key_id;
  end if;
end $$`;

// Group commit: several operations in one call (one statement, one transaction, one commit).
// p_ops is a JSON array of {"k": "admit" | "settle" | "release", "a": [arguments as strings or null,
// in the order of the function]}; the answer is a JSON array, one object per operation, same order.
// Bigints travel as text. No subtransactions (an EXCEPTION block per operation would be one, and
// successive subtransactions locking and updating the same hot row create MultiXacts, which made
// PostgreSQL slower and slower under load): an operation that raises aborts the whole call, nothing of
// the batch is committed, and the caller runs each operation of that batch again on its own
// (src/billing/postgres-batcher.ts). Refusals and replays do not raise: they only answer.
const GW_BATCH = `
create or replace function gw_batch(p_ops jsonb) returns jsonb
language plpgsql as $$
declare
  op jsonb;
  a jsonb;
  answers jsonb := '[]'::jsonb;
  ad record;
  st record;
  rel boolean;
begin
  for op in select e.value from jsonb_array_elements(p_ops) with ordinality as e(value, n) order by e.n loop
    a := op->'a';
    if op->>'k' = 'admit' then
      select g.outcome, g.detail into ad
        from gw_admit(a->>0, a->>1, a->>2, a->>3, (a->>4)::bigint, (a->>5)::bigint, a->>6, (a->>7)::bigint, (a->>8)::bigint) g;
      answers := answers || jsonb_build_array(jsonb_build_object('outcome', ad.outcome, 'detail', ad.detail));
    elsif op->>'k' = 'settle' then
      select g.o_recorded, g.o_cost into st
        from gw_settle(a->>0, a->>1, a->>2, a->>3, (a->>4)::bigint, (a->>5)::bigint, (a->>6)::bigint, a->>7,
          a->>8, a->>9, a->>10, (a->>11)::bigint, (a->>12)::bigint, (a->>13)::bigint, (a->>14)::bigint, (a->>15)::bigint) g;
      answers := answers || jsonb_build_array(jsonb_build_object('recorded', st.o_recorded, 'cost', st.o_cost::text));
    elsif op->>'k' = 'release' then
      select g.released into rel from gw_release(a->>0, (a->>1)::bigint) g;
      answers := answers || jsonb_build_array(jsonb_build_object('released', rel));
    else
      raise exception 'unknown billing operation %', op->>'k';
    end if;
  end loop;
  return answers;
end $$`;

const FUNCTIONS = [GW_ADMIT, GW_SETTLE, GW_RELEASE, GW_BATCH];
