// Durability for the billing batches, apart from their row locks (ADR 0028). A gw_batch statement
// commits with synchronous_commit off for its own transaction, so its row locks are released as soon
// as its commit record is in PostgreSQL's WAL buffers, not after the WAL flush (on the machine of the
// bench, one fdatasync is 0.5 ms idle and several ms under I/O load). The batcher then hands its
// durable answers out only after a flush: a small transaction that writes one WAL record and commits
// with the session's own synchronous_commit (`on` by default, or whatever the operator configured,
// including synchronous replication). Its commit waits for the WAL up to its own commit record to be
// flushed, which includes every commit that returned before it was sent. WAL is replayed as a prefix,
// so a batch that read another's not-yet-flushed rows can never survive a crash without them.
//
// One flush is in flight at a time; the batches that return meanwhile share the next one, sent as
// soon as the current one completes (group commit on the client side, without a timer). Answers given
// at their commit (settlements, releases) only need a later confirmation: they join whichever flush
// is sent next and send none of their own, unless none comes within CONFIRM_WITHIN_MS.
import { CompiledQuery, type Kysely } from "kysely";
import type { Database } from "../store/tables.js";

/**
 * A transactional logical-decoding message: one tiny WAL record that assigns the transaction an id,
 * so its commit writes a commit record and waits for its flush. `select txid_current()` would not do:
 * a transaction that wrote no WAL before its commit record does not wait for the flush. Allowed for
 * any role at wal_level replica or above (the default); nothing reads it unless a logical decoding
 * slot asks for messages with this prefix.
 */
const FLUSH_SQL = CompiledQuery.raw("select pg_logical_emit_message(true, 'gateway-flush', '')");

/**
 * How long an answer given at its commit may wait for a flush that confirms it when no admission
 * sends one sooner (PostgreSQL's WAL writer flushes such commits on its own within 3 ×
 * wal_writer_delay, 600 ms by default).
 */
const CONFIRM_WITHIN_MS = 100;

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class WalFlusher {
  #running = false;
  /** Waiting for the next flush to be sent; `#urgent` when one of them must not wait for the timer. */
  #waiting: Waiter[] = [];
  #urgent = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly db: Kysely<Database>) {}

  /** Resolves once a flush sent after this call completed: every commit already returned is durable. */
  afterNow(): Promise<void> {
    return this.#wait(true);
  }

  /** The same, without a flush of its own: the next one sent (by afterNow, or at the latest after CONFIRM_WITHIN_MS). */
  eventually(): Promise<void> {
    return this.#wait(false);
  }

  /** Sends the pending flush now, if any answer waits for one (before the pool closes). */
  async settle(): Promise<void> {
    if (this.#waiting.length > 0 || this.#running) await this.afterNow();
  }

  #wait(urgent: boolean): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#waiting.push({ resolve, reject });
      this.#urgent ||= urgent;
      this.#next();
    });
  }

  #next(): void {
    if (this.#running || this.#waiting.length === 0) return;
    if (this.#urgent) this.#send();
    else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#urgent = true;
        this.#next();
      }, CONFIRM_WITHIN_MS);
      this.#timer.unref();
    }
  }

  #send(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const waiters = this.#waiting;
    this.#waiting = [];
    this.#urgent = false;
    this.#running = true;
    this.db
      .executeQuery(FLUSH_SQL)
      .then(
        () => {
          for (const w of waiters) w.resolve();
        },
        (error: unknown) => {
          for (const w of waiters) w.reject(error);
        },
      )
      .finally(() => {
        this.#running = false;
        this.#next();
      });
  }
}
