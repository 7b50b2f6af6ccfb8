// PostgreSQL's part of the budget scopes (migration 0029, ADR 0037; src/core/budget-scopes.ts): PL/pgSQL
// fragments that gw_batch (gw-batch-function.ts) inlines. The rules are those of judgeBudgets() and
// the statements of budgets-sqlite.ts on SQLite.
//
// Why a lock of their own, taken first: a workspace's keys belong to several accounts, so the account
// row lock that makes the traffic windows exact (traffic-functions.ts) does not cover a workspace's
// budget row. gw_batch therefore locks every budget row its operations name (field `scopes`), in scope
// order, before it locks any account row; every call takes its locks in that one global order (scopes
// by name, then accounts by id: postgres-batcher.ts sorts them), so concurrent calls, also from other
// gateway processes, cannot deadlock on them. Each row is read once, when it is locked; its counters
// then live in the call's arrays and every row changed is written once, at the end of the call.
// A row a scope does not have yet is inserted first (ON CONFLICT DO NOTHING, in the same order).

/** gw_batch's declarations for the budget fragments. */
export const BUDGET_DECLARATIONS = `
  b_scopes text[] := '{}';
  b_month text[] := '{}';
  b_cost bigint[] := '{}';
  b_tokens bigint[] := '{}';
  b_held bigint[] := '{}';
  b_held_tokens bigint[] := '{}';
  b_dirty boolean[] := '{}';
  b_i int;
  b_k int;
  b_scope text;
  b_list jsonb;
  b_limit bigint;
  b_limit_tokens bigint;
  b_used bigint;
  b_used_tokens bigint;
  b_refused int;
  b_figures jsonb;
  b_room bigint;
  b_room_tokens bigint;
  b_m text;
  b_c bigint;
  b_t bigint;
  b_h bigint;
  b_ht bigint;`;

// Sets b_k to the index of b_scope in the arrays, locking and reading its row if this call has not
// (only for a scope an operation did not name in its `scopes` field: never expected, kept correct).
const FIND_SCOPE = `
      b_k := array_position(b_scopes, b_scope);
      if b_k is null then
        insert into budget_usage (scope, month) values (b_scope, '') on conflict (scope) do nothing;
        select u.month, u.cost_nano, u.tokens, u.held_nano, u.held_tokens into b_m, b_c, b_t, b_h, b_ht
          from budget_usage u where u.scope = b_scope for update;
        b_scopes := b_scopes || b_scope; b_month := b_month || b_m; b_cost := b_cost || b_c; b_tokens := b_tokens || b_t;
        b_held := b_held || b_h; b_held_tokens := b_held_tokens || b_ht; b_dirty := b_dirty || false;
        b_k := cardinality(b_scopes);
      end if;`;

/** First thing in gw_batch: every scope the call's operations name, created if new and locked in scope order. */
export const BUDGET_LOCK = `
  for b_scope in
    select distinct s from jsonb_array_elements(p_ops) o, jsonb_array_elements_text(o.value->'scopes') s order by s
  loop${FIND_SCOPE}
  end loop;`;

/**
 * An admission's budgets (field `scopes` and, aligned, `scope_limits`: [cost limit, token limit,
 * refusal code], limits as decimal text or null). Always computes the least room left (b_room,
 * b_room_tokens: the headroom); when v_refusal is still null and a budget refuses, sets v_refusal to
 * its code and b_figures to its figures. Writes nothing.
 */
export const BUDGET_JUDGE = `
      b_room := null; b_room_tokens := null; b_refused := null; b_figures := null;
      b_list := op->'scopes';
      if b_list is not null then
        for b_i in 0 .. jsonb_array_length(b_list) - 1 loop
          b_scope := b_list->>b_i;${FIND_SCOPE}
          b_limit := (op->'scope_limits'->b_i->>0)::bigint;
          b_limit_tokens := (op->'scope_limits'->b_i->>1)::bigint;
          if b_month[b_k] = mon then b_used := b_cost[b_k]; b_used_tokens := b_tokens[b_k];
          else b_used := 0; b_used_tokens := 0;
          end if;
          -- least() skips nulls: the room of the limited figures only.
          if b_limit is not null then b_room := least(b_room, b_limit - b_used - b_held[b_k]); end if;
          if b_limit_tokens is not null then b_room_tokens := least(b_room_tokens, b_limit_tokens - b_used_tokens - b_held_tokens[b_k]); end if;
          if v_refusal is null and b_refused is null and (
              (b_limit is not null and (b_used + b_held[b_k] + v_amount > b_limit or b_used + b_held[b_k] >= b_limit))
              or (b_limit_tokens is not null and (b_used_tokens + b_held_tokens[b_k] + v_tokens > b_limit_tokens or b_used_tokens + b_held_tokens[b_k] >= b_limit_tokens))) then
            b_refused := b_i;
            b_figures := jsonb_build_object('scope', b_scope, 'cost_limit', b_limit::text, 'token_limit', b_limit_tokens::text, 'cost', b_used::text,
              'tokens', b_used_tokens::text, 'held', b_held[b_k]::text, 'held_tokens', b_held_tokens[b_k]::text);
          end if;
        end loop;
        if b_refused is not null then v_refusal := op->'scope_limits'->b_refused->>2; end if;
      end if;`;

/** An admitted request's reservation in each of its scopes. */
export const BUDGET_HOLD = `
      if op ? 'scopes' then
        for b_i in 0 .. jsonb_array_length(op->'scopes') - 1 loop
          b_scope := op->'scopes'->>b_i;${FIND_SCOPE}
          b_held[b_k] := b_held[b_k] + v_amount;
          b_held_tokens[b_k] := b_held_tokens[b_k] + v_tokens;
          b_dirty[b_k] := true;
        end loop;
      end if;`;

/** A settlement in each scope of the operation: cost and tokens to its month (a later month starts afresh), the hold given back. */
export const BUDGET_SETTLE = `
      if op ? 'scopes' then
        for b_i in 0 .. jsonb_array_length(op->'scopes') - 1 loop
          b_scope := op->'scopes'->>b_i;${FIND_SCOPE}
          if mon = b_month[b_k] then
            b_cost[b_k] := b_cost[b_k] + v_cost; b_tokens[b_k] := b_tokens[b_k] + v_tokens;
          elsif mon > b_month[b_k] then
            b_month[b_k] := mon; b_cost[b_k] := v_cost; b_tokens[b_k] := v_tokens;
          end if;
          b_held[b_k] := b_held[b_k] - h_amount;
          b_held_tokens[b_k] := b_held_tokens[b_k] - h_tokens;
          b_dirty[b_k] := true;
        end loop;
      end if;`;

/** A released hold (its budgets column, h_budgets) gives its reservation back to each scope. */
export const BUDGET_RELEASE = `
      if h_budgets is not null then
        b_list := h_budgets::jsonb;
        for b_i in 0 .. jsonb_array_length(b_list) - 1 loop
          b_scope := b_list->>b_i;${FIND_SCOPE}
          b_held[b_k] := b_held[b_k] - h_amount;
          b_held_tokens[b_k] := b_held_tokens[b_k] - h_tokens;
          b_dirty[b_k] := true;
        end loop;
      end if;`;

/** Writes every scope the call changed, once each, at the end of gw_batch. */
export const BUDGET_WRITE = `
  for b_k in 1 .. cardinality(b_scopes) loop
    if b_dirty[b_k] then
      update budget_usage set month = b_month[b_k], cost_nano = b_cost[b_k], tokens = b_tokens[b_k],
        held_nano = b_held[b_k], held_tokens = b_held_tokens[b_k] where scope = b_scopes[b_k];
    end if;
  end loop;`;
