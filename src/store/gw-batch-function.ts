// The current definitions of PostgreSQL's billing functions: gw_batch, the group commit of billing
// operations (the design: migrations 0002 and 0003), and the helpers it calls. Defined here once;
// migrate.ts creates them (CREATE OR REPLACE) after every migration run, so a new database and an
// upgraded one always run these texts, and a change here needs no migration of its own (ADR 0009).
// Whatever they reference must exist by the time they are called, not when they are created
// (PL/pgSQL resolves tables and columns at run time).
//
// p_ops is a JSON array of operations, each an object of named fields (migration 0021; before it,
// positional arguments). Amounts, token counts and times are decimal text, so that no bigint passes
// through a float; null where a field has no value. The batcher's callers build them
// (admission-postgres.ts, settlement-postgres.ts, holds.ts):
//   admit:   k, account, key, request, hold, amount, tokens, month, now, expires, periods, limits, scopes, scope_limits, tags, holder
//   settle:  k, hold, account, key, request, cost, tokens, now, month, periods, row, scopes, tags, escrow, escrow_amount
//   release: k, hold, expired_before (null: release it whatever its expiry), dead_holders, scopes
// holder: the admitting process's liveness row (gateway_processes, migration 0040; absent: none, the
// hold ends at its expiry only). dead_holders (with expired_before, the sweeper): also release the hold
// when its holder has no row alive at expired_before (ADR 0054).
//   escrow:  k, account, holder, want, least, now, expires, trim, expired_before (escrow-functions.ts)
// scopes: the budget scopes the operation reserves in, charges or gives back (absent: none; ADR 0037,
// budget-functions.ts), locked before any account row; scope_limits: per scope, [cost limit, token
// limit, refusal code]. A refusal by a budget answers its code and "figures". tags: the request's tags
// ("key=value" texts; absent: none), kept on the hold and written to ledger_tags with the ledger row (migration 0030).
// periods: the start of the current day, ISO week and month ({day, week, month}: the key's periodic
// budget, migration 0013). row: the ledger row's own values by column name (model, provider, route,
// the four token counts, estimated, deployment (null: not a routing group), attempts (null: not
// counted), price_factor_ppm (null: list prices, migration 0026) and each column of the dimension set's ledgerColumns that is not 0 (absent: 0, the column's
// default): the INSERT is generated from the set, so a dimension added to the list reaches the ledger
// without an edit here.
// A refused admission by a money or token limit answers, besides the outcome, "headroom": what every
// limit still allows (src/billing/admission.ts, Headroom), or null when the account or the key turned
// clamping off (clamp_output, migration 0009).
// limits: the traffic limits that apply, JSON text of [{scope, rpm, tpm, concurrency}] (absent: none;
// text, so that an admission with the previous admission's limits compares text and parses nothing).
// A refusal by one answers outcome "traffic_limited" with the verdict of trafficAdmit
// (traffic-functions.ts), an admission the counted windows ("windows") for the response headers. The traffic windows
// are read once per call and written once at its end (traffic-functions.ts).
import { RELEASE_DELETE } from "./release-functions.js";
import { DIMENSION_SET, type DimensionSet } from "../core/dimensions.js";
import { DROP_OLD_ROW_WRITERS, ROW_WRITERS } from "./gw-batch-row-writers.js";
import { BUDGET_DECLARATIONS, BUDGET_HOLD, BUDGET_JUDGE, BUDGET_LOCK, BUDGET_RELEASE, BUDGET_SETTLE, BUDGET_WRITE } from "./budget-functions.js";
import { DROP_OLD_TRAFFIC_FUNCTIONS, TRAFFIC_DECLARATIONS, TRAFFIC_WRITE, trafficAdmit, trafficEnd } from "./traffic-functions.js";
import { ESCROW_DECLARATIONS, ESCROW_OP, ESCROW_PLAIN, ESCROW_RECALL, ESCROW_SETTLE } from "./escrow-functions.js";

/** SQLSTATE of a settlement replay that had to undo its own hold deletion (settlement-postgres.ts reads it as the replay it is). */
export const ALREADY_SETTLED_SQLSTATE = "GW409";

// Answers: a JSON array, one object per operation. enable_seqscan off: PL/pgSQL keeps each
// statement's plan for the session, planned with the statistics of that moment; planned while holds
// was empty, the hold's delete was a sequential scan of every live and dead hold on every settlement
// (test/billing/postgres-gw-batch.test.ts). Every statement here is meant to find its rows by index;
// measured with bench/gw-batch-ab.ts: +0.6% per operation at 2 and at 10 operations a call (noise).
export function gwBatchSql(dimensions: DimensionSet): string {
  const dimensionColumns = dimensions.ledgerColumns.join(", ");
  // A dimension column absent from the row is 0, its default: the caller leaves out the zeros (most of a row's).
  const dimensionValues = dimensions.ledgerColumns.map((column) => `coalesce((r->>'${column}')::bigint, 0)`).join(", ");
  return `
create or replace function gw_batch(p_ops jsonb) returns jsonb
language plpgsql set enable_seqscan = off as $$
declare
  op jsonb;
  -- a settle operation's ledger row
  r jsonb;
  v_kind text;
  -- one answer per operation: appending to an array is amortised O(1), to a jsonb array O(n) (copied)
  answers jsonb[] := '{}';
  o_account text;
  o_key text;
  h_amount bigint;
  h_tokens bigint;
  h_traffic text;
  h_budgets text;
  v_verdict jsonb;
  v_traffic text;
  v_released boolean;
  v_amount bigint;
  v_tokens bigint;
  v_cost bigint;
  v_collected bigint;
  ledger_id bigint;
  -- the hash of the account's last ledger row this call appended (null: none): its accounts.ledger_head
  a_head text;
  v_hash text;
  -- the account of the current run, locked
  acc text;
  acc_found boolean := false;
  a_status text;
  a_balance bigint;
  a_held bigint;
  a_held_tokens bigint;
  a_budget bigint;
  a_token_budget bigint;
  a_clamp bigint;
  a_spent bigint := 0;
  a_dirty boolean := false;
  -- monthly usage of that account: the stored row (read when a budget needs it) plus this batch's sums
  mon text;
  m_loaded boolean := false;
  m_cost bigint := 0;
  m_tokens bigint := 0;
  d_cost bigint := 0;
  d_tokens bigint := 0;
  d_requests bigint := 0;
  -- the current key of that account, locked
  kid text;
  k_found boolean := false;
  k_status text;
  k_budget bigint;
  k_spent bigint;
  k_held bigint;
  k_token_cap bigint;
  k_tokens_used bigint;
  k_held_tokens bigint;
  k_clamp bigint;
  k_last_used bigint;
  v_refusal text;
  k_dirty boolean := false;
  -- that key's periodic budget (migration 0013); p_* are its counters as they count now
  k_period text;
  k_pbudget bigint;
  k_ptoken_cap bigint;
  k_pstarted bigint;
  k_pspent bigint;
  k_ptokens bigint;
  k_pdirty boolean := false;
  v_pstart bigint;
  p_spent bigint;
  p_tokens bigint;
  -- the traffic windows of this call (traffic-functions.ts)${TRAFFIC_DECLARATIONS}
  -- the budget scopes of this call (budget-functions.ts)${BUDGET_DECLARATIONS}
  -- an escrow operation's slice (escrow-functions.ts)${ESCROW_DECLARATIONS}
begin
  -- Every budget row the batch names, locked first, in scope order (budget-functions.ts).${BUDGET_LOCK}
  for op in select e.value from jsonb_array_elements(p_ops) with ordinality as e(value, n) order by e.n loop
    v_kind := op->>'k';
    if op ? 'a' then
      raise exception 'billing operation with positional arguments: this gateway process predates migration 0021';
    end if;
    h_amount := 0;
    h_tokens := 0;
    h_traffic := null;
    h_budgets := null;
    v_released := false;
    if v_kind = 'admit' then
      o_account := op->>'account';
      o_key := op->>'key';
    elsif v_kind = 'settle' then
      delete from holds where id = op->>'hold' returning amount_nano, tokens, traffic into h_amount, h_tokens, h_traffic;
      v_released := found;
      if not v_released then h_amount := 0; h_tokens := 0; end if;
      o_account := op->>'account';
      o_key := op->>'key';
    elsif v_kind = 'release' then${RELEASE_DELETE}
    elsif v_kind = 'escrow' then
      o_account := op->>'account'; o_key := null;
    else
      raise exception 'unknown billing operation %', v_kind;
    end if;

    -- Another account: write back the previous one's rows, lock this one.
    if acc is distinct from o_account then
      if k_dirty then perform gw_put_key(kid, k_status, k_spent, k_held, k_tokens_used, k_held_tokens, k_last_used); end if;
      if k_pdirty then perform gw_put_key_period(kid, k_pstarted, k_pspent, k_ptokens); end if;
      if d_requests > 0 then perform gw_add_month(acc, mon, d_cost, d_tokens, d_requests); end if;
      if a_dirty then perform gw_put_account(acc, a_balance, a_held, a_held_tokens, a_spent, a_head); end if;
      acc := o_account;
      select status, balance_nano, held_nano, held_tokens, monthly_budget_nano, monthly_token_budget, clamp_output
        into a_status, a_balance, a_held, a_held_tokens, a_budget, a_token_budget, a_clamp
        from accounts where id = acc for update;
      acc_found := found;
      a_spent := 0;
      a_head := null;
      a_dirty := false;
      kid := null;
      k_found := false;
      k_dirty := false;
      k_pdirty := false;
      mon := null;
      m_loaded := false;
      d_cost := 0; d_tokens := 0; d_requests := 0;
    end if;
    -- Another month (a batch across midnight UTC on the 1st): write back the previous month's sums.
    if v_kind in ('admit', 'settle') and mon is distinct from op->>'month' then
      if d_requests > 0 then perform gw_add_month(acc, mon, d_cost, d_tokens, d_requests); end if;
      mon := op->>'month';
      m_loaded := false;
      d_cost := 0; d_tokens := 0; d_requests := 0;
    end if;
    -- Another key of this account: write back the previous key, lock this one (never another account's).
    if acc_found and o_key is not null and kid is distinct from o_key then
      if k_dirty then perform gw_put_key(kid, k_status, k_spent, k_held, k_tokens_used, k_held_tokens, k_last_used); end if;
      if k_pdirty then perform gw_put_key_period(kid, k_pstarted, k_pspent, k_ptokens); end if;
      kid := o_key;
      select status, budget_cap_nano, spent_nano, held_nano, token_cap, tokens_used, held_tokens, clamp_output,
          period, period_budget_nano, period_token_cap, period_started_at, period_spent_nano, period_tokens_used
        into k_status, k_budget, k_spent, k_held, k_token_cap, k_tokens_used, k_held_tokens, k_clamp,
          k_period, k_pbudget, k_ptoken_cap, k_pstarted, k_pspent, k_ptokens
        from keys where id = kid and account_id = acc for update;
      k_found := found;
      k_dirty := false;
      k_pdirty := false;
      k_last_used := null;
    end if;

    if v_kind = 'admit' then
      v_amount := (op->>'amount')::bigint;
      v_tokens := (op->>'tokens')::bigint;
      if not acc_found then
        answers := answers || jsonb_build_object('outcome', 'no_account', 'detail', null);
        continue;
      end if;
      if a_status <> 'active' then
        answers := answers || jsonb_build_object('outcome', 'account_suspended', 'detail', a_status);
        continue;
      end if;
      v_refusal := null;
      if a_budget is not null or a_token_budget is not null then
        if not m_loaded then
          select m.cost_nano, m.tokens into m_cost, m_tokens from monthly_usage m where m.account_id = acc and m.month = mon;
          if not found then m_cost := 0; m_tokens := 0; end if;
          m_loaded := true;
        end if;
        if (a_budget is not null and m_cost + d_cost + a_held + v_amount > a_budget)
           or (a_token_budget is not null and m_tokens + d_tokens + a_held_tokens + v_tokens > a_token_budget) then
          v_refusal := 'monthly_budget_exceeded';
        end if;
      end if;
      if v_refusal is null and a_balance - a_held < v_amount then
        v_refusal := 'insufficient_balance';
      end if;
      -- The key's periodic counters count only within the current period.
      p_spent := 0; p_tokens := 0;
      if k_found and k_period is not null then
        v_pstart := (op->'periods'->>k_period)::bigint;
        if k_pstarted >= v_pstart then p_spent := k_pspent; p_tokens := k_ptokens; end if;
      end if;
      if v_refusal is null then
        if not k_found or k_status = 'revoked' then
          answers := answers || jsonb_build_object('outcome', 'auth_error', 'detail', null);
          continue;
        end if;
        if k_status = 'exhausted' then
          answers := answers || jsonb_build_object('outcome',
            case when k_budget is not null and k_spent >= k_budget then 'key_budget_exceeded'
                 when k_token_cap is not null and k_tokens_used >= k_token_cap then 'key_token_cap_exceeded'
                 else 'key_budget_exceeded' end, 'detail', null);
          continue;
        end if;
        if k_budget is not null and k_spent + k_held + v_amount > k_budget then
          v_refusal := 'key_budget_exceeded';
        elsif k_token_cap is not null and k_tokens_used + k_held_tokens + v_tokens > k_token_cap then
          v_refusal := 'key_token_cap_exceeded';
        elsif k_period is not null and k_pbudget is not null and p_spent + k_held + v_amount > k_pbudget then
          v_refusal := 'key_period_budget_exceeded';
        elsif k_period is not null and k_ptoken_cap is not null and p_tokens + k_held_tokens + v_tokens > k_ptoken_cap then
          v_refusal := 'key_period_token_cap_exceeded';
        end if;
      end if;
      -- The budget scopes (a workspace key's workspace and member budgets), after the key's checks.${BUDGET_JUDGE}
      if v_refusal is not null then${ESCROW_RECALL}
        answers := answers || jsonb_build_object('outcome', v_refusal, 'figures', b_figures, 'recalled', e_count,
          'detail', case when v_refusal = 'insufficient_balance' then (a_balance - a_held)::text
                         when v_refusal like 'key_period_%' then k_period end,
          'headroom', case when a_clamp = 1 and k_found and k_status = 'enabled' and k_clamp = 1 then jsonb_build_object(
            'balance', (a_balance - a_held)::text,
            'month_cost', case when a_budget is not null then (a_budget - m_cost - d_cost - a_held)::text end,
            'month_tokens', case when a_token_budget is not null then (a_token_budget - m_tokens - d_tokens - a_held_tokens)::text end,
            'key_cost', case when k_budget is not null then (k_budget - k_spent - k_held)::text end,
            'key_tokens', case when k_token_cap is not null then (k_token_cap - k_tokens_used - k_held_tokens)::text end,
            'period_cost', case when k_period is not null and k_pbudget is not null then (k_pbudget - p_spent - k_held)::text end,
            'period_tokens', case when k_period is not null and k_ptoken_cap is not null then (k_ptoken_cap - p_tokens - k_held_tokens)::text end,
            'budget_cost', b_room::text, 'budget_tokens', b_room_tokens::text) end);
        continue;
      end if;
      -- The traffic limits, after the money checks (admission.ts), judged and counted under the account's lock.
      v_traffic := null;
      v_verdict := null;
      if op->>'limits' is not null then
${trafficAdmit("op->>'limits'", "(op->>'now')::bigint", "v_tokens")}
        if v_verdict ? 'refused' then
          answers := answers || jsonb_build_object('outcome', 'traffic_limited', 'traffic', v_verdict);
          continue;
        end if;
        v_traffic := v_verdict->>'record';
      end if;
      insert into holds (id, account_id, key_id, request_id, amount_nano, tokens, created_at, expires_at, traffic, budgets, tags, holder)
        values (op->>'hold', acc, kid, op->>'request', v_amount, v_tokens, (op->>'now')::bigint, (op->>'expires')::bigint, v_traffic, (op->'scopes')::text,
          (op->'tags')::text, op->>'holder');${BUDGET_HOLD}
      a_held := a_held + v_amount;
      a_held_tokens := a_held_tokens + v_tokens;
      k_held := k_held + v_amount;
      k_held_tokens := k_held_tokens + v_tokens;
      a_dirty := true;
      k_dirty := true;
      answers := answers || jsonb_build_object('outcome', 'ok', 'detail', null, 'windows', v_verdict->'windows', 'plain', ${ESCROW_PLAIN});

    elsif v_kind = 'settle' then
      if not acc_found then raise exception 'account % does not exist', acc; end if;
      v_cost := (op->>'cost')::bigint;
      v_tokens := (op->>'tokens')::bigint;
      v_collected := least(a_balance, v_cost);
      r := op->'row';
      insert into ledger (created_at, account_id, key_id, request_id, kind, model, provider, route,
          input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost_nano, estimated, note, deployment,
          ${dimensionColumns}, attempts, price_factor_ppm)
        values ((op->>'now')::bigint, acc, o_key, op->>'request', 'usage', r->>'model', r->>'provider', r->>'route',
          (r->>'input_tokens')::bigint, (r->>'cached_tokens')::bigint, (r->>'output_tokens')::bigint, (r->>'reasoning_tokens')::bigint,
          v_cost, (r->>'estimated')::bigint,
          case when v_cost > v_collected then 'shortfall_nano=' || (v_cost - v_collected)::text end, r->>'deployment',
          ${dimensionValues}, (r->>'attempts')::bigint, (r->>'price_factor_ppm')::bigint)
        on conflict (request_id) do nothing
        returning id, hash into ledger_id, v_hash;
      if ledger_id is null then
        if v_released then raise exception 'request % already settled', op->>'request' using errcode = '${ALREADY_SETTLED_SQLSTATE}'; end if;
        answers := answers || jsonb_build_object('recorded', false,
          'cost', (select l.cost_nano::text from ledger l where l.request_id = op->>'request'));
        continue;
      end if;
      if op ? 'tags' then
        insert into ledger_tags (ledger_id, tag, account_id, created_at, cost_nano, tokens)
          select ledger_id, t, acc, (op->>'now')::bigint, v_cost, v_tokens from jsonb_array_elements_text(op->'tags') t;
      end if;
      a_balance := a_balance - v_collected;
      a_spent := a_spent + v_cost;
      a_head := v_hash;
      a_held := a_held - h_amount;
      a_held_tokens := a_held_tokens - h_tokens;
      a_dirty := true;
      if o_key is not null and k_found then
        k_spent := k_spent + v_cost;
        k_tokens_used := k_tokens_used + v_tokens;
        k_held := k_held - h_amount;
        k_held_tokens := k_held_tokens - h_tokens;
        k_last_used := (op->>'now')::bigint;
        if k_status = 'enabled' and ((k_budget is not null and k_spent >= k_budget) or (k_token_cap is not null and k_tokens_used >= k_token_cap)) then
          k_status := 'exhausted';
        end if;
        k_dirty := true;
        if k_period is not null then
          v_pstart := (op->'periods'->>k_period)::bigint;
          if k_pstarted >= v_pstart then
            k_pspent := k_pspent + v_cost;
            k_ptokens := k_ptokens + v_tokens;
          else
            k_pstarted := v_pstart;
            k_pspent := v_cost;
            k_ptokens := v_tokens;
          end if;
          k_pdirty := true;
        end if;
      end if;
      d_cost := d_cost + v_cost;
      d_tokens := d_tokens + v_tokens;
      d_requests := d_requests + 1;${BUDGET_SETTLE}${ESCROW_SETTLE}
      if h_traffic is not null then${trafficEnd("h_traffic", "v_tokens")}
      end if;
      answers := answers || jsonb_build_object('recorded', true, 'cost', v_cost::text, 'plain', ${ESCROW_PLAIN});
    elsif v_kind = 'escrow' then${ESCROW_OP}
    else -- release: the hold row is gone; give its reservation back.
      if acc_found then
        a_held := a_held - h_amount;
        a_held_tokens := a_held_tokens - h_tokens;
        a_dirty := true;
        if o_key is not null and k_found then
          k_held := k_held - h_amount;
          k_held_tokens := k_held_tokens - h_tokens;
          k_dirty := true;
        end if;
      end if;
${BUDGET_RELEASE}
      if h_traffic is not null then${trafficEnd("h_traffic", "0")}
      end if;
      answers := answers || jsonb_build_object('released', true);
    end if;
  end loop;
  if k_dirty then perform gw_put_key(kid, k_status, k_spent, k_held, k_tokens_used, k_held_tokens, k_last_used); end if;
  if k_pdirty then perform gw_put_key_period(kid, k_pstarted, k_pspent, k_ptokens); end if;
  if d_requests > 0 then perform gw_add_month(acc, mon, d_cost, d_tokens, d_requests); end if;
  if a_dirty then perform gw_put_account(acc, a_balance, a_held, a_held_tokens, a_spent, a_head); end if;${TRAFFIC_WRITE}${BUDGET_WRITE}
  return to_jsonb(answers);
end $$`;
}

/** gw_batch for the gateway's dimensions. */
export const GW_BATCH = gwBatchSql(DIMENSION_SET);

const functions = new WeakMap<DimensionSet, readonly string[]>();

/**
 * Every billing function for a dimension set, in creation order; migrate.ts re-creates them after
 * every migration run, for the set of the database handle (DIMENSION_SET but in tests).
 */
export function billingFunctions(dimensions: DimensionSet): readonly string[] {
  let statements = functions.get(dimensions);
  if (statements === undefined) {
    statements = [...ROW_WRITERS, ...DROP_OLD_TRAFFIC_FUNCTIONS, dimensions === DIMENSION_SET ? GW_BATCH : gwBatchSql(dimensions), ...DROP_OLD_ROW_WRITERS];
    functions.set(dimensions, statements);
  }
  return statements;
}
