// The traffic windows on SQLite (traffic-limits.ts; ADR 0029): within one write transaction
// of the batcher (sqlite-writer.ts) each scope's row is read at most once, at its first use; its
// counters then live in memory for the rest of the transaction, admissions are judged and counted in
// JS by judgeTraffic() (the rules PostgreSQL's gw_batch applies too, traffic-functions.ts), ends of holds correct
// them there, and every scope changed is written once, by one upsert, just before COMMIT. A rollback
// drops them with the transaction's writes. Exact across gateway processes: the transaction holds
// SQLite's write lock from BEGIN IMMEDIATE to COMMIT, so no other connection writes a row meanwhile.
//
// Why: one conditional upsert per scope per admission and one UPDATE per scope per end of hold were
// most of the limits' cost (issue 23); a batch of N requests on one key now writes that key's row once.
import { Statement, transactionState, TransactionStateKind, type SqlExec, type TransactionState } from "../store/sqlite-writer.js";
import { judgeTraffic, type TrafficLimit, type TrafficRefusal, type WindowCounts } from "../core/traffic-limits.js";

interface WindowRow {
  window_start: bigint;
  requests: bigint;
  tokens: bigint;
  in_flight: bigint;
}

const WINDOW_ROW = new Statement<WindowRow>(`select window_start, requests, tokens, in_flight from traffic_windows where scope = ?`);

// Parameters: scope, window start, requests, tokens, in flight: the scope's counters as the transaction left them.
const WRITE_WINDOW = new Statement<never>(`
  insert into traffic_windows (scope, window_start, requests, tokens, in_flight) values (?, ?, ?, ?, ?)
  on conflict (scope) do update set
    window_start = excluded.window_start, requests = excluded.requests, tokens = excluded.tokens, in_flight = excluded.in_flight`);

/** One scope as the transaction sees it: undefined counters when it has no row (and got none). */
interface ScopeWindow {
  counts: WindowCounts | undefined;
  dirty: boolean;
}

export class TrafficWindows implements TransactionState {
  readonly #scopes = new Map<string, ScopeWindow>();

  #scope(exec: SqlExec, scope: string): ScopeWindow {
    let window = this.#scopes.get(scope);
    if (window === undefined) {
      const row = WINDOW_ROW.first(exec, [scope]);
      window = { counts: row && countsOf(row), dirty: false };
      this.#scopes.set(scope, window);
    }
    return window;
  }

  /** Judges one admission against every limit and, when all allow it, counts it in every scope; a refusal changes nothing. */
  admit(exec: SqlExec, limits: readonly TrafficLimit[], now: number, tokens: number): { next: WindowCounts[] } | { refusal: TrafficRefusal } {
    const windows = limits.map((limit) => this.#scope(exec, limit.scope));
    const verdict = judgeTraffic(
      limits,
      windows.map((w) => w.counts),
      now,
      tokens,
    );
    if ("next" in verdict) {
      // judgeTraffic made new objects; the caller keeps `next` (record, headers), it is never changed here.
      windows.forEach((w, i) => {
        w.counts = verdict.next[i]!;
        w.dirty = true;
      });
    }
    return verdict;
  }

  /**
   * Ends a hold in one scope: frees its concurrency slot, and adds `tokenDelta` (actual − projected,
   * never below 0) while the window is still the one the admission counted in. No row: nothing to do.
   */
  end(exec: SqlExec, scope: string, admittedWindowStart: number, tokenDelta: number): void {
    const window = this.#scope(exec, scope);
    const c = window.counts;
    if (c === undefined) return;
    window.counts = {
      windowStart: c.windowStart,
      requests: c.requests,
      tokens: c.windowStart === admittedWindowStart ? Math.max(c.tokens + tokenDelta, 0) : c.tokens,
      inFlight: Math.max(c.inFlight - 1, 0),
    };
    window.dirty = true;
  }

  flush(exec: SqlExec): void {
    for (const [scope, window] of this.#scopes) {
      const c = window.counts;
      if (!window.dirty || c === undefined) continue;
      WRITE_WINDOW.changes(exec, [scope, BigInt(c.windowStart), BigInt(c.requests), BigInt(c.tokens), BigInt(c.inFlight)]);
    }
  }
}

const TRAFFIC_WINDOWS = new TransactionStateKind(() => new TrafficWindows());

/** The traffic windows of the writer's transaction open on exec. */
export function trafficWindows(exec: SqlExec): TrafficWindows {
  return transactionState(exec, TRAFFIC_WINDOWS);
}

function countsOf(row: WindowRow): WindowCounts {
  return { windowStart: Number(row.window_start), requests: Number(row.requests), tokens: Number(row.tokens), inFlight: Number(row.in_flight) };
}
