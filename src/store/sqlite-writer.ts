// SQLite write path of the billing store: precompiled SQL and group commit.
//
// Precompiled SQL: the per-request statements are SQL text constants (Statement below), prepared once
// per connection and run with fresh parameters; no query is built per request.
//
// Group commit: every admission, settlement and release on SQLite goes through SqliteWriter.run().
// Operations that arrive within one event-loop turn are flushed together (setImmediate) in ONE
// `BEGIN IMMEDIATE … COMMIT`. An operation answers refusals and replays as values (it never throws for
// them, and writes nothing or undoes its own writes before answering, see admission-sqlite.ts and
// settlement-sqlite.ts); it throws only on a failure (a trigger, a CHECK, a lost transaction).
// - All operations succeed: one COMMIT for the batch, then each gets its answer.
// - An operation throws: the whole batch is rolled back — nothing of it remains — and each operation
//   of the batch runs again on its own, in its own transaction (a batch of one), in the same order, so
//   each gets exactly the answer or error it would have got alone: the failing one its own error (a
//   settlement answers 502 ledger_write_failed with every counter unchanged), the others commit.
// - The write lock is taken (by another gateway process, or by the checkpointer's RESTART, see
//   src/store/sqlite-checkpointer.ts): the batch's BEGIN IMMEDIATE runs with busy_timeout 0, so
//   SQLite answers SQLITE_BUSY at once instead of sleeping in its busy handler (1, 2, 5, 10… ms with
//   the whole event loop stopped: every request of the process waited, not only the billing ones).
//   The connection's other queries still wait as configured (src/store/sqlite-busy-wait.ts).
//   The batch goes back to the head of the queue and is tried again a timer tick later, operations
//   arriving meanwhile join it; after busyTimeoutMs (the connection's own busy_timeout, 5 s) of
//   continuous SQLITE_BUSY every operation of it fails with that error, nothing changed.
// - BEGIN or COMMIT fails otherwise (I/O): the batch is rolled back and every operation of it fails
//   with that error, nothing changed.
// Transaction state (TransactionState below): an operation may keep rows in memory for the rest of
// the batch's transaction (the traffic windows, traffic-windows-sqlite.ts) instead of a statement per
// request; the writer flushes them just before COMMIT and drops them when the transaction ends either
// way, so a rolled-back batch leaves no trace in memory either. Exact across gateway processes: the
// state lives only while this connection holds SQLite's write lock (BEGIN IMMEDIATE … COMMIT).
// No SAVEPOINT per operation: they were a third of the billing store's time under load. Results are
// handed out only after COMMIT, so no caller sees a charge that could still be lost.
// The statements go straight to better-sqlite3 (synchronous), not through Kysely: a batch runs to
// the end within one turn, with no promise per statement (Kysely's per-query machinery was the
// largest source of garbage on the request path, measured with bench/profile.ts --alloc). While a
// Kysely transaction is open on the connection (it spans awaits), the batch waits for Kysely's
// connection lease and runs after its COMMIT; otherwise it runs at once, without the lease: being
// synchronous, nothing can come between its statements (one pair at a time, bench/billing-pair.ts:
// 144–148 → 117–135 µs of wall time, user CPU 64–73 → 53–57 µs).
import type SqliteDatabase from "better-sqlite3";
import type { Kysely } from "kysely";
import { SqliteBusyWait } from "./sqlite-busy-wait.js";
import type { Database } from "./tables.js";

/** What the operations execute on: the raw SQLite connection, synchronously, inside the batch. */
export type SqlExec = SqliteDatabase.Database;

/** One SQL text, prepared once per connection; parameters are bound per call. */
export class Statement<R> {
  readonly text: string;
  readonly #prepared = new WeakMap<SqlExec, SqliteDatabase.Statement>();
  constructor(text: string) {
    this.text = text.replace(/\s+/g, " ").trim();
  }
  #on(exec: SqlExec): SqliteDatabase.Statement {
    let statement = this.#prepared.get(exec);
    if (!statement) {
      statement = exec.prepare(this.text);
      this.#prepared.set(exec, statement);
    }
    return statement;
  }
  rows(exec: SqlExec, parameters: readonly unknown[]): R[] {
    return this.#on(exec).all(...parameters) as R[];
  }
  first(exec: SqlExec, parameters: readonly unknown[]): R | undefined {
    return this.#on(exec).get(...parameters) as R | undefined;
  }
  /** Rows changed by an INSERT, UPDATE or DELETE without RETURNING. */
  changes(exec: SqlExec, parameters: readonly unknown[]): bigint {
    return BigInt(this.#on(exec).run(...parameters).changes);
  }
}

/** An operation of a batch: synchronous, so a whole batch runs without yielding to the event loop. */
export type SqliteOp<T> = (exec: SqlExec) => T;

/** What an operation keeps for the rest of its write transaction: written by flush() just before COMMIT. */
export interface TransactionState {
  flush(exec: SqlExec): void;
}

/** A kind of transaction state; create() makes the empty state at its first use in a transaction. */
export class TransactionStateKind<S extends TransactionState> {
  constructor(readonly create: () => S) {}
}

/** The states of each connection's open write transaction, present only from BEGIN to COMMIT or ROLLBACK. */
const openStates = new WeakMap<SqlExec, Map<TransactionStateKind<TransactionState>, TransactionState>>();

/** The state of `kind` in the writer's transaction open on exec; throws outside one (it would never be written). */
export function transactionState<S extends TransactionState>(exec: SqlExec, kind: TransactionStateKind<S>): S {
  const states = openStates.get(exec);
  if (states === undefined) throw new Error("transaction state used outside a SqliteWriter transaction");
  let state = states.get(kind);
  if (state === undefined) {
    state = kind.create();
    states.set(kind, state);
  }
  return state as S;
}

/** BEGIN IMMEDIATE, with no transaction state yet. */
function begin(exec: SqlExec): void {
  BEGIN.changes(exec, []);
  openStates.set(exec, new Map());
}

/** Writes the transaction's states; a failure here is the operations' (the caller rolls back). */
function flushStates(exec: SqlExec): void {
  const states = openStates.get(exec);
  if (states !== undefined) for (const state of states.values()) state.flush(exec);
}

/** COMMIT; the states were flushed before. */
function commit(exec: SqlExec): void {
  COMMIT.changes(exec, []);
  openStates.delete(exec);
}

interface Pending {
  op: SqliteOp<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

const BEGIN = new Statement<never>("begin immediate");
const COMMIT = new Statement<never>("commit");
const ROLLBACK = new Statement<never>("rollback");

/** How long after a SQLITE_BUSY the batch's BEGIN is tried again (a timer tick). */
const BUSY_RETRY_MS = 1;

/** Batches of this process that found the write lock taken and waited (another process was writing). */
let busyRetries = 0;
/** How often a batch of this process found another process holding the write lock (bench/results/history/2026-11-25T0207-several-workers.md). */
export function sqliteBusyRetries(): number {
  return busyRetries;
}

export class SqliteWriter {
  #queue: Pending[] = [];
  #scheduled = false;
  /** When the current run of SQLITE_BUSY answers began (performance.now()), undefined when none. */
  #busySince: number | undefined;
  readonly #busyTimeoutMs: number;
  readonly #busyWait: SqliteBusyWait;
  readonly #onBatch: ((seconds: number) => void) | undefined;

  /**
   * `db` is the Kysely instance over `sqlite`: its connection lease keeps other queries out of a batch.
   * busyTimeoutMs: how long a batch waits for the write lock; the connection's busy_timeout by default.
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly sqlite: SqlExec,
    options: { busyTimeoutMs?: number; onBatch?: ((seconds: number) => void) | undefined } = {},
  ) {
    this.#onBatch = options.onBatch;
    this.#busyWait = SqliteBusyWait.of(sqlite);
    this.#busyTimeoutMs = options.busyTimeoutMs ?? this.#busyWait.timeoutMs;
  }

  /** Runs op atomically in the next batch; resolves after the batch committed. */
  run<T>(op: SqliteOp<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ op, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const batch = this.#queue;
    this.#queue = [];
    if (batch.length === 0) return;
    const sqlite = this.sqlite;
    const busyWait = this.#busyWait;
    const onBatch = this.#onBatch;
    const done = (outcome: "busy" | "done") => {
      if (outcome === "busy") this.#retryLater(batch);
      else this.#busySince = undefined;
    };
    const failed = (error: unknown) => {
      for (const item of batch) item.reject(error);
    };
    if (!sqlite.inTransaction) {
      // No lease needed (see the header): nothing can come between the statements of this batch.
      let outcome: "busy" | "done";
      try {
        outcome = onBatch === undefined ? runBatch(sqlite, batch, busyWait) : timedBatch(sqlite, batch, busyWait, onBatch);
      } catch (error) {
        return failed(error);
      }
      return done(outcome);
    }
    // A Kysely transaction is open (it spans awaits): wait for its lease, so the batch runs after it.
    this.db
      .connection()
      .execute(async () => (onBatch === undefined ? runBatch(sqlite, batch, busyWait) : timedBatch(sqlite, batch, busyWait, onBatch)))
      .then(done, failed);
  }

  /** The write lock was taken: the batch waits at the head of the queue, the event loop goes on. */
  #retryLater(batch: Pending[]): void {
    busyRetries += 1;
    const now = performance.now();
    this.#busySince ??= now;
    if (now - this.#busySince >= this.#busyTimeoutMs) {
      this.#busySince = undefined;
      const error = Object.assign(new Error(`database is locked (waited ${this.#busyTimeoutMs} ms for the write lock)`), { code: "SQLITE_BUSY" });
      for (const item of batch) item.reject(error);
      return;
    }
    this.#queue = batch.concat(this.#queue);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setTimeout(() => this.#flush(), BUSY_RETRY_MS);
  }
}

/** runBatch, reporting the seconds it took (metrics on). */
function timedBatch(sqlite: SqlExec, batch: Pending[], busyWait: SqliteBusyWait, onBatch: (seconds: number) => void): "busy" | "done" {
  const started = performance.now();
  try {
    return runBatch(sqlite, batch, busyWait);
  } finally {
    onBatch((performance.now() - started) / 1000);
  }
}

function isBusy(error: unknown): boolean {
  return String((error as { code?: unknown } | null)?.code ?? "").startsWith("SQLITE_BUSY");
}

/**
 * BEGIN IMMEDIATE without waiting in SQLite's busy handler: false when another connection holds the
 * write lock. Waiting stays off for the next batch; a Kysely query turns it back on before it runs.
 */
function beginWithoutWaiting(exec: SqlExec, busyWait: SqliteBusyWait): boolean {
  busyWait.dontWaitForLock();
  try {
    begin(exec);
    return true;
  } catch (error) {
    if (isBusy(error)) return false;
    throw error;
  }
}

/** Thrown by an operation (not by BEGIN or COMMIT): the batch is then run again one by one. */
class OperationFailed extends Error {
  constructor(readonly error: unknown) {
    super("a batched operation failed");
  }
}

/** "busy" when the write lock was taken and nothing ran; otherwise every operation has its answer. */
function runBatch(exec: SqlExec, batch: Pending[], busyWait: SqliteBusyWait): "busy" | "done" {
  if (!beginWithoutWaiting(exec, busyWait)) return "busy";
  if (batch.length === 1) {
    runInTransaction(exec, batch[0]!);
    return "done";
  }
  const values: unknown[] = [];
  try {
    for (const item of batch) {
      try {
        values.push(item.op(exec));
      } catch (error) {
        throw new OperationFailed(error);
      }
    }
    try {
      flushStates(exec);
    } catch (error) {
      throw new OperationFailed(error);
    }
    commit(exec);
  } catch (failure) {
    rollback(exec);
    if (!(failure instanceof OperationFailed)) {
      for (const item of batch) item.reject(failure);
      return "done";
    }
    busyWait.waitForLock();
    for (const item of batch) runAlone(exec, item);
    return "done";
  }
  batch.forEach((item, i) => item.resolve(values[i]));
  return "done";
}

/** One operation in its own transaction (after a batch failed; the busy handler may wait here). */
function runAlone(exec: SqlExec, item: Pending): void {
  try {
    begin(exec);
  } catch (error) {
    item.reject(error);
    return;
  }
  runInTransaction(exec, item);
}

/** The operation and COMMIT inside a transaction that has begun; rolled back when either fails. */
function runInTransaction(exec: SqlExec, item: Pending): void {
  let value: unknown;
  try {
    value = item.op(exec);
    flushStates(exec);
    commit(exec);
  } catch (error) {
    rollback(exec);
    item.reject(error);
    return;
  }
  item.resolve(value);
}

function rollback(exec: SqlExec): void {
  // What the operations kept in memory goes with the transaction's writes.
  openStates.delete(exec);
  // Some errors (RAISE(ROLLBACK), a failed COMMIT) already ended the transaction.
  try {
    if (exec.inTransaction) ROLLBACK.changes(exec, []);
  } catch {
    // Nothing more to undo here; the operation's own error is what the caller gets.
  }
}
