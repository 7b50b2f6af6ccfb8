// Whether a SQLite connection waits for another connection's write lock (its busy_timeout), switched
// lazily, one state per connection.
//
// The billing writer begins its batches without waiting (src/store/sqlite-writer.ts: SQLite's busy
// handler sleeps the calling thread, which is the event loop); every other query on the connection
// (Kysely's) waits up to the connection's busy_timeout, as configured when it was opened. Setting the
// pragma to 0 before each batch's BEGIN and back after it cost two statements per transaction
// (~5 µs of a ~15 µs one-row transaction, measured with better-sqlite3 here). Now the writer turns
// waiting off only when it is on and leaves it off; the next Kysely query turns it back on before it
// runs. Under load, when only billing batches use the connection, no pragma runs at all.
import type SqliteDatabase from "better-sqlite3";

const states = new WeakMap<SqliteDatabase.Database, SqliteBusyWait>();

export class SqliteBusyWait {
  /** The connection's busy_timeout when it was first seen here: what waiting queries get. */
  readonly timeoutMs: number;
  #waiting = true;
  readonly #wait: SqliteDatabase.Statement;
  readonly #dontWait: SqliteDatabase.Statement;

  private constructor(connection: SqliteDatabase.Database) {
    this.timeoutMs = Number(connection.pragma("busy_timeout", { simple: true }));
    this.#wait = connection.prepare(`pragma busy_timeout = ${this.timeoutMs}`);
    this.#dontWait = connection.prepare("pragma busy_timeout = 0");
  }

  /** The state of this connection (created on first use, from its busy_timeout at that moment). */
  static of(connection: SqliteDatabase.Database): SqliteBusyWait {
    let state = states.get(connection);
    if (!state) {
      state = new SqliteBusyWait(connection);
      states.set(connection, state);
    }
    return state;
  }

  /** Before any statement that should wait for the write lock as configured. */
  waitForLock(): void {
    if (this.#waiting) return;
    this.#wait.get();
    this.#waiting = true;
  }

  /** Before a BEGIN that must answer SQLITE_BUSY at once instead of sleeping in the busy handler. */
  dontWaitForLock(): void {
    if (!this.#waiting) return;
    this.#dontWait.get();
    this.#waiting = false;
  }
}
