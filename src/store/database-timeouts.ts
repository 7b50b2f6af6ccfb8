// How long the gateway waits on PostgreSQL (src/store/database.ts): its own module, so that the
// config loader reads the defaults without loading the database drivers.

/** Milliseconds; 0 waits without limit (the driver's own default). */
export interface DatabaseTimeouts {
  connectMs: number;
  queryMs: number;
}

/**
 * Without limits a gateway cut off from PostgreSQL by a silent partition (packets dropped, no reset)
 * waits on TCP's retransmissions for about 15 minutes: every request hangs and /readyz with it.
 * Request-path statements take milliseconds; the query limit leaves room for the slowest
 * background pages (ledger verify, retention) on a loaded database. Decision 0049.
 */
export const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = { connectMs: 5_000, queryMs: 15_000 };
