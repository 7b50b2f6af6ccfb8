// The request log's writer (ADR 0023): the request path appends one entry to an in-memory buffer
// (one push: no I/O, no await, no promise) and this class writes the buffer behind it, in batches:
// when it holds a batch's worth of entries or on a timer, whichever comes first.
// - SQLite: through a SqliteWriter of its own (src/store/sqlite-writer.ts) on the one connection.
//   Its transactions are separate from billing's, so a billing batch never waits for request-log
//   rows to be inserted in its own transaction, and a write lock held by another process makes it
//   try again later instead of stopping the event loop. A batch is at most batchSize rows, so the
//   longest a billing batch can wait for one is a single short insert.
// - PostgreSQL: a multi-row INSERT on one pooled connection.
// The buffer is bounded: when the database cannot keep up (or fails), entries are dropped, counted
// (droppedTotal, the gateway_request_log_dropped_total metric) and reported in a warning at most
// once per warnIntervalMs. close() writes what is buffered. Old rows are pruned by time, in
// bounded batches, on a timer.
import type { Logger } from "pino";
import type { Kysely } from "kysely";
import { SqliteWriter } from "../store/sqlite-writer.js";
import type { DatabaseHandle } from "../store/database.js";
import { insertRequestLogPostgres, insertRequestLogSqlite, pruneRequestLogPostgres, pruneRequestLogSqlite, type RequestLogEntry } from "../store/request-log-store.js";
import type { Database } from "../store/tables.js";
import type { RequestLogSettings } from "./settings.js";

/** Entries written per batch (one transaction on SQLite, a few INSERT statements on PostgreSQL). */
const BATCH_SIZE = 200;
/** Rows deleted per prune statement; the next batch runs a turn later. */
const PRUNE_BATCH = 1_000;
const PRUNE_INTERVAL_MS = 10 * 60_000;
/** The first prune after start, so a restarted gateway catches up without delaying its start. */
const FIRST_PRUNE_DELAY_MS = 5_000;
const WARN_INTERVAL_MS = 10_000;
const DAY_MS = 86_400_000;

type Sink = { dialect: "sqlite"; writer: SqliteWriter } | { dialect: "postgres"; db: Kysely<Database> };

export class RequestLog {
  #buffer: RequestLogEntry[] = [];
  #dropped = 0;
  #written = 0;
  #droppedWarned = 0;
  #lastWarnAt = -Infinity;
  #flushing: Promise<void> | null = null;
  #flushScheduled = false;
  #pruning: Promise<void> | null = null;
  #closed = false;
  #stopping = false;
  readonly #sink: Sink;
  readonly #timers: NodeJS.Timeout[] = [];

  constructor(
    handle: Pick<DatabaseHandle, "db" | "dialect" | "sqlite">,
    readonly settings: RequestLogSettings,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    if (handle.dialect === "sqlite") {
      if (!handle.sqlite) throw new Error("the request log on SQLite needs the raw connection (DatabaseHandle.sqlite)");
      this.#sink = { dialect: "sqlite", writer: new SqliteWriter(handle.db, handle.sqlite) };
    } else this.#sink = { dialect: "postgres", db: handle.db };
  }

  /** Starts the flush and prune timers (the server; tests may drive flush() and prune() themselves). */
  start(): void {
    const flush = setInterval(() => void this.flush(), this.settings.flushIntervalMs);
    const prune = setInterval(() => void this.prune(), PRUNE_INTERVAL_MS);
    const firstPrune = setTimeout(() => void this.prune(), FIRST_PRUNE_DELAY_MS);
    for (const timer of [flush, prune, firstPrune]) {
      timer.unref();
      this.#timers.push(timer);
    }
  }

  /** The request path's only call: one push, or a count when the buffer is full. */
  append(entry: RequestLogEntry): void {
    if (this.#buffer.length >= this.settings.maxBuffered || this.#closed) {
      this.#dropped += 1;
      return;
    }
    this.#buffer.push(entry);
    if (this.#buffer.length >= BATCH_SIZE && !this.#flushScheduled && this.#flushing === null) {
      this.#flushScheduled = true;
      setImmediate(() => {
        this.#flushScheduled = false;
        void this.flush();
      });
    }
  }

  /** Entries dropped since start (buffer full, or their batch failed to write). */
  get droppedTotal(): number {
    return this.#dropped;
  }

  /** Entries written since start. */
  get writtenTotal(): number {
    return this.#written;
  }

  get buffered(): number {
    return this.#buffer.length;
  }

  /** Writes what is buffered now, a batch at a time; resolves when it is written (or dropped). */
  flush(): Promise<void> {
    this.#flushing ??= this.#drain().finally(() => {
      this.#flushing = null;
    });
    return this.#flushing;
  }

  async #drain(): Promise<void> {
    while (this.#buffer.length > 0) {
      const batch = this.#buffer.length <= BATCH_SIZE ? this.#buffer : this.#buffer.slice(0, BATCH_SIZE);
      this.#buffer = batch === this.#buffer ? [] : this.#buffer.slice(BATCH_SIZE);
      try {
        await this.#write(batch);
        this.#written += batch.length;
      } catch (err) {
        this.#dropped += batch.length;
        this.logger.warn({ err, entries: batch.length }, "writing request log entries failed; they are dropped");
      }
    }
    this.#warnAboutDrops();
  }

  #write(batch: readonly RequestLogEntry[]): Promise<void> {
    const sink = this.#sink;
    if (sink.dialect === "sqlite") return sink.writer.run((exec) => insertRequestLogSqlite(exec, batch));
    return insertRequestLogPostgres(sink.db, batch);
  }

  #warnAboutDrops(): void {
    if (this.#dropped === this.#droppedWarned) return;
    const at = performance.now();
    if (at - this.#lastWarnAt < WARN_INTERVAL_MS) return;
    this.#lastWarnAt = at;
    this.logger.warn(
      { dropped: this.#dropped - this.#droppedWarned, dropped_total: this.#dropped, max_buffered: this.settings.maxBuffered },
      "request log entries dropped: the database did not keep up",
    );
    this.#droppedWarned = this.#dropped;
  }

  /** Deletes the rows older than the retention, PRUNE_BATCH at a time; the count deleted. */
  prune(): Promise<number> {
    if (this.#pruning !== null) return this.#pruning.then(() => 0);
    let deleted = 0;
    const run = async () => {
      const before = this.now() - this.settings.retentionDays * DAY_MS;
      for (;;) {
        const n = await this.#pruneBatch(before);
        deleted += n;
        if (n < PRUNE_BATCH || this.#stopping) return;
        // A turn between batches: billing and request-log writes go first.
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const pruning = run()
      .catch((err: unknown) => this.logger.warn({ err }, "pruning the request log failed"))
      .finally(() => (this.#pruning = null));
    this.#pruning = pruning;
    return pruning.then(() => deleted);
  }

  #pruneBatch(before: number): Promise<number> {
    const sink = this.#sink;
    if (sink.dialect === "sqlite") return sink.writer.run((exec) => pruneRequestLogSqlite(exec, before, PRUNE_BATCH));
    return pruneRequestLogPostgres(sink.db, before, PRUNE_BATCH);
  }

  /** Stops the timers and writes what is buffered; entries appended later are dropped (counted). */
  async close(): Promise<void> {
    this.#stopping = true;
    for (const timer of this.#timers) clearInterval(timer);
    await this.#pruning;
    await this.flush();
    this.#closed = true;
    // A last flush for what arrived while the previous one ran.
    await this.flush();
  }
}
