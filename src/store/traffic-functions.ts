// PostgreSQL's part of the rate and concurrency limits (migration 0012, ADR 0016, amended): PL/pgSQL
// fragments that gw_batch (gw-batch-function.ts) inlines, so that within one gw_batch call each
// scope's row of traffic_windows is read at most once, at its first use; its counters then live in
// the call's arrays, admissions are judged and counted there with judgeTraffic()'s rules
// (src/core/traffic-limits.ts; the same as traffic-windows-sqlite.ts on SQLite), ends of holds
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
import { WINDOW_MS } from "../core/traffic-limits.js";

/** gw_batch's declarations for the traffic fragments: the scopes read in this call and their counters (t_start null: no row). */
export const TRAFFIC_DECLARATIONS = `
  t_scopes text[] := '{}';
  t_start bigint[] := '{}';
  t_requests bigint[] := '{}';
  t_tokens bigint[] := '{}';
  t_in_flight bigint[] := '{}';
  t_dirty boolean[] := '{}';
  -- the limits text last read (an admission with the same text reuses l_*): per limit, its scope's
  -- index in t_*, its scope as JSON text, and its figures (null: unset)
  l_text text;
  l_k int[];
  l_scope_json text[];
  l_rpm bigint[];
  l_tpm bigint[];
  l_concurrency bigint[];
  -- per limit, the window as the current admission judged it
  c_start bigint[];
  c_requests bigint[];
  c_tokens bigint[];
  c_in_flight bigint[];
  c_counted bigint[]; -- one row [window_start, requests, tokens, in_flight] per limit
  c_record text;
  t_l jsonb;
  t_w jsonb;
  t_i int;
  t_k int;
  t_now bigint;
  t_s bigint;
  t_r bigint;
  t_t bigint;
  t_f bigint;
  t_kind text;`;

// Sets t_k to the index of the scope (an expression) in the arrays, reading its row at its first use in the call.
// (One statement per scope: reading all of an admission's scopes with one statement, `scope = any(…)`
// and array_agg, and writing them with one upsert from unnest(…) measured 4-5% slower in gw_batch:
// bench/gw-batch-ab.ts, 2 scopes.)
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
 * changes nothing). Inputs: limits (JSON text [{"scope", "rpm", "tpm", "concurrency"}, ...], null for
 * an unset figure), now, tokens (the projection): expressions. Sets v_verdict to {"refused": index,
 * "kind": "rpm" | "tpm" | "concurrency", "window": [window_start, requests, tokens, in_flight] as
 * judged} or {"record": the hold's traffic text, "windows": [[window_start, requests, tokens,
 * in_flight], ...] as counted} (the answer's shape since migration 0012, which a gateway process of
 * the previous version still running against this function reads: built from a 2-D array).
 * The limits are parsed only when their text differs from the previous admission's in this call (a
 * batch's admissions are mostly one key's, with the same limits): per admission, what runs is the
 * judging and counting over plain arrays, no JSON but the answer's.
 */
export function trafficAdmit(limits: string, now: string, tokens: string): string {
  return `
    if l_text is distinct from ${limits} then
      l_text := ${limits};
      t_w := l_text::jsonb;
      l_k := '{}'; l_scope_json := '{}'; l_rpm := '{}'; l_tpm := '{}'; l_concurrency := '{}';
      for t_i in 0 .. jsonb_array_length(t_w) - 1 loop
        t_l := t_w->t_i;${findScope("t_l->>'scope'")}
        l_k := l_k || t_k;
        l_scope_json := l_scope_json || (t_l->'scope')::text;
        l_rpm := l_rpm || (t_l->>'rpm')::bigint;
        l_tpm := l_tpm || (t_l->>'tpm')::bigint;
        l_concurrency := l_concurrency || (t_l->>'concurrency')::bigint;
      end loop;
    end if;
    t_now := ${now};
    t_kind := null;
    for t_i in 1 .. cardinality(l_k) loop
      t_k := l_k[t_i];
      -- The scope's window as this admission sees it: a new one when the stored one has ended (in_flight carries over).
      t_s := t_start[t_k]; t_r := t_requests[t_k]; t_t := t_tokens[t_k]; t_f := t_in_flight[t_k];
      if t_s is null then t_s := t_now; t_r := 0; t_t := 0; t_f := 0;
      elsif t_now >= t_s + ${WINDOW_MS} then t_s := t_now; t_r := 0; t_t := 0;
      end if;
      if t_r + 1 > l_rpm[t_i] then t_kind := 'rpm';
      elsif t_t + ${tokens} > l_tpm[t_i] then t_kind := 'tpm';
      elsif t_f + 1 > l_concurrency[t_i] then t_kind := 'concurrency';
      end if;
      if t_kind is not null then
        v_verdict := jsonb_build_object('refused', t_i - 1, 'kind', t_kind, 'window', jsonb_build_array(t_s, t_r, t_t, t_f));
        exit;
      end if;
      c_start[t_i] := t_s; c_requests[t_i] := t_r + 1; c_tokens[t_i] := t_t + ${tokens}; c_in_flight[t_i] := t_f + 1;
    end loop;
    if t_kind is null then
      c_counted := '{}';
      c_record := '{"t":' || ${tokens} || ',"w":[';
      for t_i in 1 .. cardinality(l_k) loop
        t_k := l_k[t_i];
        t_start[t_k] := c_start[t_i]; t_requests[t_k] := c_requests[t_i]; t_tokens[t_k] := c_tokens[t_i]; t_in_flight[t_k] := c_in_flight[t_i];
        t_dirty[t_k] := true;
        c_counted := c_counted || array[[c_start[t_i], c_requests[t_i], c_tokens[t_i], c_in_flight[t_i]]];
        c_record := c_record || case when t_i > 1 then ',[' else '[' end || l_scope_json[t_i] || ',' || c_start[t_i] || ']';
      end loop;
      v_verdict := jsonb_build_object('record', c_record || ']}', 'windows', to_jsonb(c_counted));
    end if;`;
}

/**
 * Ends what a hold counted (its traffic text, an expression; actual: the tokens it used, 0 for a
 * release): frees the slot of each scope and corrects the tokens by (actual - projected), never below
 * 0, while the window is the one the admission counted in. A scope without a row: nothing to do.
 * The traffic text is the hold's record ({"t": tokens, "w": [[scope, window start], ...]},
 * TrafficRecord in traffic-limits.ts): stored data that SQLite reads too and holds written by an
 * earlier version carry, not an argument, so it keeps its compact form.
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
