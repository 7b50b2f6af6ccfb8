// PostgreSQL's functions for the rate and concurrency limits (migration 0012, ADR 0016), called by
// gw_batch (gw-batch-function.ts) and, like it, re-created by migrate.ts after every migration run.
// A statement per scope: reading every scope in one aggregate and writing them with one INSERT from
// arrays, or ending them with one SQL-language UPDATE … FROM, measured slower per call (SQL functions
// are planned on every call; the ordered aggregates sort each array).
import { WINDOW_MS } from "../../billing/traffic-limits.js";

// The traffic limits of one admission (src/billing/traffic-limits.ts, judgeTraffic: the same rules):
// p_limits is [[scope, rpm, tpm, concurrency], ...] (null: no such limit), judged in that order. Every
// scope is read and judged first, written only when all pass, so a refusal writes nothing. Called by
// gw_batch with the account's row locked: every writer of an account's scopes (admission, settlement,
// release) holds that lock, and each statement here reads what committed before it was taken.
// Answers {"refused": index, "kind": "rpm" | "tpm" | "concurrency", "window": [window_start, requests,
// tokens, in_flight] as judged} or
// {"record": the hold's traffic text, "windows": [[window_start, requests, tokens, in_flight], ...]}.
export const GW_TRAFFIC_ADMIT = `
create or replace function gw_traffic_admit(p_limits jsonb, p_now bigint, p_tokens bigint) returns jsonb
language plpgsql as $$
declare
  l jsonb;
  i int := 0;
  w_start bigint;
  w_requests bigint;
  w_tokens bigint;
  w_in_flight bigint;
  v_windows jsonb := '[]'::jsonb;
  v_spans jsonb := '[]'::jsonb;
begin
  for l in select e.value from jsonb_array_elements(p_limits) with ordinality as e(value, n) order by e.n loop
    select t.window_start, t.requests, t.tokens, t.in_flight into w_start, w_requests, w_tokens, w_in_flight
      from traffic_windows t where t.scope = l->>0;
    if not found then
      w_start := p_now; w_requests := 0; w_tokens := 0; w_in_flight := 0;
    elsif p_now >= w_start + ${WINDOW_MS} then
      w_start := p_now; w_requests := 0; w_tokens := 0;
    end if;
    if l->>1 is not null and w_requests + 1 > (l->>1)::bigint then
      return jsonb_build_object('refused', i, 'kind', 'rpm', 'window', jsonb_build_array(w_start, w_requests, w_tokens, w_in_flight));
    end if;
    if l->>2 is not null and w_tokens + p_tokens > (l->>2)::bigint then
      return jsonb_build_object('refused', i, 'kind', 'tpm', 'window', jsonb_build_array(w_start, w_requests, w_tokens, w_in_flight));
    end if;
    if l->>3 is not null and w_in_flight + 1 > (l->>3)::bigint then
      return jsonb_build_object('refused', i, 'kind', 'concurrency', 'window', jsonb_build_array(w_start, w_requests, w_tokens, w_in_flight));
    end if;
    v_windows := v_windows || jsonb_build_array(jsonb_build_array(w_start, w_requests + 1, w_tokens + p_tokens, w_in_flight + 1));
    v_spans := v_spans || jsonb_build_array(jsonb_build_array(l->>0, w_start));
    i := i + 1;
  end loop;
  i := 0;
  for l in select e.value from jsonb_array_elements(p_limits) with ordinality as e(value, n) order by e.n loop
    insert into traffic_windows as t (scope, window_start, requests, tokens, in_flight)
      values (l->>0, (v_windows->i->>0)::bigint, (v_windows->i->>1)::bigint, (v_windows->i->>2)::bigint, (v_windows->i->>3)::bigint)
      on conflict (scope) do update set window_start = excluded.window_start, requests = excluded.requests,
        tokens = excluded.tokens, in_flight = excluded.in_flight;
    i := i + 1;
  end loop;
  return jsonb_build_object('record', jsonb_build_object('t', p_tokens, 'w', v_spans)::text, 'windows', v_windows);
end $$`;

// Ends what a hold counted (its traffic text): frees the slot of each scope and corrects the tokens by
// (actual - projected) while the window is the one the admission counted in (endTrafficSqlite: the same).
export const GW_TRAFFIC_END = `
create or replace function gw_traffic_end(p_traffic text, p_actual bigint) returns void
language plpgsql as $$
declare
  v jsonb := p_traffic::jsonb;
  w jsonb;
begin
  for w in select e.value from jsonb_array_elements(v->'w') as e(value) loop
    update traffic_windows set in_flight = greatest(in_flight - 1, 0),
        tokens = case when window_start = (w->>1)::bigint then greatest(tokens + p_actual - (v->>'t')::bigint, 0) else tokens end
      where scope = w->>0;
  end loop;
end $$`;
