// SQLite write path of the billing store: precompiled SQL and group commit.
//
// Precompiled SQL: the per-request statements are SQL text constants (Statement below), executed as
// a CompiledQuery with fresh parameters. Kysely builds no AST for them, and the store's statement
// cache (src/store/database.ts) finds the prepared better-sqlite3 statement by its text.
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
// - BEGIN or COMMIT fails (SQLITE_BUSY from another process, I/O): the batch is rolled back and every
//   operation of it fails with that error, nothing changed; SQLITE_BUSY is retried by the caller.
// No SAVEPOINT per operation: they were a third of the billing store's time under load. Results are
// handed out only after COMMIT, so no caller sees a charge that could still be lost.
// better-sqlite3 is synchronous, so a batch runs to the end within one turn; Kysely's connection
// mutex keeps other queries of this process out of it while it runs.
import { CompiledQuery, type Kysely, type QueryResult } from "kysely";
import type { Database } from "../store/tables.js";

/** What the operations execute on: the batch's connection. */
export type SqlExec = Pick<Kysely<Database>, "executeQuery">;

/** One SQL text, compiled once; parameters are bound per call. */
export class Statement<R> {
  readonly #base: CompiledQuery<R>;
  constructor(text: string) {
    this.#base = CompiledQuery.raw(text.replace(/\s+/g, " ").trim()) as CompiledQuery<R>;
  }
  bind(parameters: readonly unknown[]): CompiledQuery<R> {
    return { ...this.#base, parameters };
  }
  async rows(exec: SqlExec, parameters: readonly unknown[]): Promise<R[]> {
    return (await exec.executeQuery(this.bind(parameters))).rows;
  }
  async first(exec: SqlExec, parameters: readonly unknown[]): Promise<R | undefined> {
    return (await exec.executeQuery(this.bind(parameters))).rows[0];
  }
  /** Rows changed by an INSERT, UPDATE or DELETE without RETURNING. */
  async changes(exec: SqlExec, parameters: readonly unknown[]): Promise<bigint> {
    const result: QueryResult<R> = await exec.executeQuery(this.bind(parameters));
    return result.numAffectedRows ?? 0n;
  }
}

export type SqliteOp<T> = (exec: SqlExec) => Promise<T>;

interface Pending {
  op: SqliteOp<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

const BEGIN = CompiledQuery.raw("begin immediate");
const COMMIT = CompiledQuery.raw("commit");
const ROLLBACK = CompiledQuery.raw("rollback");

export class SqliteWriter {
  #queue: Pending[] = [];
  #scheduled = false;

  constructor(private readonly db: Kysely<Database>) {}

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
    this.db
      .connection()
      .execute((conn) => runBatch(conn, batch))
      .catch((error: unknown) => {
        for (const item of batch) item.reject(error);
      });
  }
}

/** Thrown by an operation (not by BEGIN or COMMIT): the batch is then run again one by one. */
class OperationFailed {
  constructor(readonly error: unknown) {}
}

async function runBatch(conn: SqlExec, batch: Pending[]): Promise<void> {
  if (batch.length === 1) return runAlone(conn, batch[0]!);
  const values: unknown[] = [];
  try {
    await conn.executeQuery(BEGIN);
    for (const item of batch) values.push(await item.op(conn).catch((error: unknown) => Promise.reject(new OperationFailed(error))));
    await conn.executeQuery(COMMIT);
  } catch (failure) {
    await conn.executeQuery(ROLLBACK).catch(() => undefined);
    if (!(failure instanceof OperationFailed)) {
      for (const item of batch) item.reject(failure);
      return;
    }
    for (const item of batch) await runAlone(conn, item);
    return;
  }
  batch.forEach((item, i) => item.resolve(values[i]));
}

async function runAlone(conn: SqlExec, item: Pending): Promise<void> {
  let value: unknown;
  try {
    await conn.executeQuery(BEGIN);
    value = await item.op(conn);
    await conn.executeQuery(COMMIT);
  } catch (error) {
    await conn.executeQuery(ROLLBACK).catch(() => undefined);
    item.reject(error);
    return;
  }
  item.resolve(value);
}
