// PostgreSQL's functions for the rate and concurrency limits (migration 0012, ADR 0016), called by
// gw_batch (gw-batch-function.ts) and, like it, re-created by migrate.ts after every migration run.
// A statement per scope: reading every scope in one aggregate and writing them with one INSERT from
// arrays, or ending them with one SQL-language UPDATE … FROM, measured slower per call (SQL functions
// are planned on every call; the ordered aggregates sort each array) than a read and a write per
// scope, which one conditional upsert per scope now replaces.
import { WINDOW_MS } from "../../billing/traffic-limits.js";

// The traffic limits of one admission (src/billing/traffic-limits.ts: the same rules as judgeTraffic,
// and the same statements as admission-sqlite.ts): p_limits is [[scope, rpm, tpm, concurrency], ...]
// (null: no such limit), judged in that order. Each scope is judged and counted by one conditional
// upsert (no row returned: a limit refused); a refusal takes back the scopes counted before it (a
// window the admission opened is marked ended) and judges the refusing scope as stored, so it leaves
// no trace. Called by gw_batch with the account's row locked: every writer of an account's scopes
// (admission, settlement, release) holds that lock, and each statement here reads what committed
// before it was taken.
// Answers {"refused": index, "kind": "rpm" | "tpm" | "concurrency", "window": [window_start, requests,
// tokens, in_flight] as judged} or
// {"record": the hold's traffic text, "windows": [[window_start, requests, tokens, in_flight], ...]}.
const ENDED = `p_now >= t.window_start + ${WINDOW_MS}`;
export const GW_TRAFFIC_ADMIT = `
create or replace function gw_traffic_admit(p_limits jsonb, p_now bigint, p_tokens bigint) returns jsonb
language plpgsql as $$
declare
  l jsonb;
  i int;
  j int;
  v_rpm bigint;
  v_tpm bigint;
  v_concurrent bigint;
  v_kind text;
  w_start bigint;
  w_requests bigint;
  w_tokens bigint;
  w_in_flight bigint;
  v_windows jsonb := '[]'::jsonb;
  v_spans jsonb := '[]'::jsonb;
begin
  for i in 0 .. jsonb_array_length(p_limits) - 1 loop
    l := p_limits->i;
    v_rpm := (l->>1)::bigint;
    v_tpm := (l->>2)::bigint;
    v_concurrent := (l->>3)::bigint;
    w_start := null;
    -- A first admission passes its rpm and concurrency limits; its tpm limit is checked here.
    if v_tpm is null or p_tokens <= v_tpm then
      insert into traffic_windows as t (scope, window_start, requests, tokens, in_flight) values (l->>0, p_now, 1, p_tokens, 1)
        on conflict (scope) do update set
          window_start = case when ${ENDED} then p_now else t.window_start end,
          requests = case when ${ENDED} then 0 else t.requests end + 1,
          tokens = case when ${ENDED} then 0 else t.tokens end + p_tokens,
          in_flight = t.in_flight + 1
        where (v_rpm is null or case when ${ENDED} then 0 else t.requests end + 1 <= v_rpm)
          and (v_tpm is null or case when ${ENDED} then 0 else t.tokens end + p_tokens <= v_tpm)
          and (v_concurrent is null or t.in_flight + 1 <= v_concurrent)
        returning t.window_start, t.requests, t.tokens, t.in_flight into w_start, w_requests, w_tokens, w_in_flight;
    end if;
    if w_start is null then
      for j in 0 .. i - 1 loop
        if (v_windows->j->>0)::bigint = p_now and (v_windows->j->>1)::bigint = 1 then
          update traffic_windows set window_start = p_now - ${WINDOW_MS}, requests = 0, tokens = 0, in_flight = in_flight - 1 where scope = p_limits->j->>0;
        else
          update traffic_windows set requests = requests - 1, tokens = tokens - p_tokens, in_flight = in_flight - 1 where scope = p_limits->j->>0;
        end if;
      end loop;
      select t.window_start, t.requests, t.tokens, t.in_flight into w_start, w_requests, w_tokens, w_in_flight
        from traffic_windows t where t.scope = l->>0;
      if not found then
        w_start := p_now; w_requests := 0; w_tokens := 0; w_in_flight := 0;
      elsif p_now >= w_start + ${WINDOW_MS} then
        w_start := p_now; w_requests := 0; w_tokens := 0;
      end if;
      if v_rpm is not null and w_requests + 1 > v_rpm then v_kind := 'rpm';
      elsif v_tpm is not null and w_tokens + p_tokens > v_tpm then v_kind := 'tpm';
      elsif v_concurrent is not null and w_in_flight + 1 > v_concurrent then v_kind := 'concurrency';
      else raise exception 'traffic limits of %: refused by the upsert, allowed by the judgement', l->>0;
      end if;
      return jsonb_build_object('refused', i, 'kind', v_kind, 'window', jsonb_build_array(w_start, w_requests, w_tokens, w_in_flight));
    end if;
    v_windows := v_windows || jsonb_build_array(jsonb_build_array(w_start, w_requests, w_tokens, w_in_flight));
    v_spans := v_spans || jsonb_build_array(jsonb_build_array(l->>0, w_start));
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
