// PostgreSQL's part of the rate and concurrency limits (migration 0012, ADR 0016, amended): PL/pgSQL
// fragments that gw_batch (gw-batch-function.ts) inlines, so that within one gw_batch call each
// scope's row of traffic_windows is read at most once, at its first use; its counters then live in
// the call's arrays, admissions are judged and counted there with judgeTraffic()'s rules
// (src/billing/traffic-limits.ts; the same as traffic-windows-sqlite.ts on SQLite), ends of holds
// correct them there, and every scope changed is written once, by one upsert, at the end of the call.
// Why: one conditional upsert per scope per admission and one UPDATE per scope per end of hold made
// the limits cost a fifth of PostgreSQL's throughput (issue 23); a batch of N requests on one key now
// writes that key's row once.
//
// Exact without `for update`: a scope belongs to one account ("key:<id>…" of one of its keys, or
// "account:<id>…"), every writer of traffic_windows is gw_batch (admission, settlement, release and
// the expiry sweeper's release), and gw_batch locks an operation's account row (kept until COMMIT)
// before any traffic fragment of that operation runs; the first read, a statement after that lock,
// sees everything committed before it. A release whose account no longer exists takes no lock, but
// then nothing else writes that account's scopes either. gw_batch has no sub-block per operation: an
// operation that raises rolls the whole call back (the batcher then runs each operation on its own),
// so the arrays never outlive a failed operation; a refusal is judged before anything is counted.
import { WINDOW_MS } from "../../billing/traffic-limits.js";

/** gw_batch's declarations for the traffic fragments: the scopes read in this call and their counters (t_start null: no row). */
export const TRAFFIC_DECLARATIONS = `
  t_scopes text[] := '{}';
  t_start bigint[] := '{}';
  t_requests bigint[] := '{}';
  t_tokens bigint[] := '{}';
  t_in_flight bigint[] := '{}';
  t_dirty boolean[] := '{}';
  t_counted int[];
  t_limits jsonb;
  t_l jsonb;
  t_w jsonb;
  t_windows jsonb;
  t_spans jsonb;
  t_i int;
  t_k int;
  t_now bigint;
  t_s bigint;
  t_r bigint;
  t_t bigint;
  t_f bigint;
  t_kind text;`;

// Sets t_k to the index of the scope (an expression) in the arrays, reading its row at its first use in the call.
function findScope(scope: string): string {
  return `
    t_k := array_position(t_scopes, ${scope});
    if t_k is null then
      select w.window_start, w.requests, w.tokens, w.in_flight into t_s, t_r, t_t, t_f from traffic_windows w where w.scope = ${scope};
      t_scopes := t_scopes || (${scope});
      t_start := t_start || t_s;
      t_requests := t_requests || t_r;
      t_tokens := t_tokens || t_t;
      t_in_flight := t_in_flight || t_f;
      t_dirty := t_dirty || false;
      t_k := cardinality(t_scopes);
    end if;`;
}

/**
 * Judges one admission against its limits and, when all allow it, counts it in every scope (a refusal
 * changes nothing). Inputs: limits (JSON [[scope, rpm, tpm, concurrency], ...], null for an unset
 * figure), now, tokens (the projection): expressions. Sets v_verdict to {"refused": index, "kind":
 * "rpm" | "tpm" | "concurrency", "window": [window_start, requests, tokens, in_flight] as judged} or
 * {"record": the hold's traffic text, "windows": [[window_start, requests, tokens, in_flight], ...] as counted}.
 */
export function trafficAdmit(limits: string, now: string, tokens: string): string {
  return `
    t_limits := ${limits};
    t_now := ${now};
    t_windows := '[]'::jsonb;
    t_spans := '[]'::jsonb;
    t_counted := '{}';
    t_kind := null;
    for t_i in 0 .. jsonb_array_length(t_limits) - 1 loop
      t_l := t_limits->t_i;${findScope("t_l->>0")}
      -- The scope's window as this admission sees it: a new one when the stored one has ended (in_flight carries over).
      t_s := t_start[t_k]; t_r := t_requests[t_k]; t_t := t_tokens[t_k]; t_f := t_in_flight[t_k];
      if t_s is null then t_s := t_now; t_r := 0; t_t := 0; t_f := 0;
      elsif t_now >= t_s + ${WINDOW_MS} then t_s := t_now; t_r := 0; t_t := 0;
      end if;
      if t_l->>1 is not null and t_r + 1 > (t_l->>1)::bigint then t_kind := 'rpm';
      elsif t_l->>2 is not null and t_t + ${tokens} > (t_l->>2)::bigint then t_kind := 'tpm';
      elsif t_l->>3 is not null and t_f + 1 > (t_l->>3)::bigint then t_kind := 'concurrency';
      end if;
      if t_kind is not null then
        v_verdict := jsonb_build_object('refused', t_i, 'kind', t_kind, 'window', jsonb_build_array(t_s, t_r, t_t, t_f));
        exit;
      end if;
      t_counted := t_counted || t_k;
      t_windows := t_windows || jsonb_build_array(jsonb_build_array(t_s, t_r + 1, t_t + ${tokens}, t_f + 1));
      t_spans := t_spans || jsonb_build_array(jsonb_build_array(t_l->>0, t_s));
    end loop;
    if t_kind is null then
      for t_i in 1 .. cardinality(t_counted) loop
        t_k := t_counted[t_i];
        t_w := t_windows->(t_i - 1);
        t_start[t_k] := (t_w->>0)::bigint;
        t_requests[t_k] := (t_w->>1)::bigint;
        t_tokens[t_k] := (t_w->>2)::bigint;
        t_in_flight[t_k] := (t_w->>3)::bigint;
        t_dirty[t_k] := true;
      end loop;
      v_verdict := jsonb_build_object('record', jsonb_build_object('t', ${tokens}, 'w', t_spans)::text, 'windows', t_windows);
    end if;`;
}

/**
 * Ends what a hold counted (its traffic text, an expression; actual: the tokens it used, 0 for a
 * release): frees the slot of each scope and corrects the tokens by (actual - projected), never below
 * 0, while the window is the one the admission counted in. A scope without a row: nothing to do.
 */
export function trafficEnd(traffic: string, actual: string): string {
  return `
    t_l := (${traffic})::jsonb;
    for t_i in 0 .. jsonb_array_length(t_l->'w') - 1 loop
      t_w := t_l->'w'->t_i;${findScope("t_w->>0")}
      if t_start[t_k] is not null then
        if t_start[t_k] = (t_w->>1)::bigint then
          t_tokens[t_k] := greatest(t_tokens[t_k] + ${actual} - (t_l->>'t')::bigint, 0);
        end if;
        t_in_flight[t_k] := greatest(t_in_flight[t_k] - 1, 0);
        t_dirty[t_k] := true;
      end if;
    end loop;`;
}

/** Writes every scope the call changed, once each, at the end of gw_batch. */
export const TRAFFIC_WRITE = `
  for t_k in 1 .. cardinality(t_scopes) loop
    if t_dirty[t_k] then
      insert into traffic_windows as w (scope, window_start, requests, tokens, in_flight)
        values (t_scopes[t_k], t_start[t_k], t_requests[t_k], t_tokens[t_k], t_in_flight[t_k])
        on conflict (scope) do update set window_start = excluded.window_start, requests = excluded.requests,
          tokens = excluded.tokens, in_flight = excluded.in_flight;
    end if;
  end loop;`;

/** The per-statement functions the fragments replace (before issue 23's amendment); dropped from databases that have them. */
export const DROP_OLD_TRAFFIC_FUNCTIONS = [`drop function if exists gw_traffic_admit(jsonb, bigint, bigint)`, `drop function if exists gw_traffic_end(text, bigint)`];
