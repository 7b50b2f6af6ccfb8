// PostgreSQL group commit for the billing store. Every admission, settlement and release is one
// operation of gw_batch (src/store/gw-batch-function.ts; the design: migrations 0002 and
// 0003, ADR 0002 and 0009). The batcher sends the operations that queue up while earlier batches
// are in flight as ONE statement, `select gw_batch($1)`, in autocommit: one round trip and one commit (one WAL flush) for the batch, and a busy account row
// is locked once per batch instead of once per request — on PostgreSQL that lock is held until the
// commit's WAL flush, which is what serialises the requests of one account.
//
// Per-request atomicity and the 502 contract: a batch is one transaction. Refusals and replays do not
// raise (they only answer), so in the normal case the whole batch commits. When an operation raises
// (a trigger, a CHECK, a deadlock, GW409, a dropped connection), PostgreSQL rolls the whole statement
// back — nothing of the batch changed — and each operation of the batch is then run again on its own
// (a batch of one), so that each gets exactly its own answer or its own error (with the pg error's
// SQLSTATE as `code`: the caller retries deadlocks and serialization failures and recognises GW409 as
// a replay) and the others commit. There are no subtransactions: see gw_batch in migration 0002.
// Within a batch, gw_batch writes each hot account and key row once (migration 0003).
// Answers are handed out after the statement returned, i.e. after COMMIT.
//
// Lock order across batches: operations are sent sorted by account id (then key id), and every
// function locks the account row before the key row, so concurrent batches (also from other gateway
// processes) take account locks in one global order and cannot deadlock on them. A deadlock that
// still happens (a hold row, see holds.ts) is detected by PostgreSQL and retried (40P01).
import { CompiledQuery, type Kysely } from "kysely";
import { isDatabaseUnreachable } from "../store/db-errors.js";
import type { Database } from "../store/tables.js";
import type { PeriodStarts } from "./key-period.js";

export type PgOperationKind = "admit" | "settle" | "release" | "escrow";
/** A field of an operation, as JSON: amounts, token counts and times as decimal text (never through a float). */
export type PgField = string | number | null | readonly PgField[] | { readonly [name: string]: PgField };
/** One operation of gw_batch: its kind and its named fields (gw-batch-function.ts lists them). */
export type PgOperation = { readonly k: PgOperationKind } & { readonly [name: string]: PgField };
/** One operation's answer: flat strings and flags, and an admission refusal's headroom object. */
export type PgAnswer = Record<string, unknown>;

interface Pending {
  op: PgOperation;
  order: string;
  resolve: (answer: PgAnswer) => void;
  reject: (error: unknown) => void;
}

/**
 * Batches in flight at once per process. Batches of one busy account wait for each other on its row
 * lock; batches of different accounts run in parallel. At most 2 of the pool's connections (10 by
 * default), so other queries (authentication, reads) always find one. Since gw_batch writes a hot
 * row once per batch (migration 0003), bigger batches are cheaper per operation: measured with
 * `bench/profile.ts --database postgres://…` (one account, wrk, 50 connections), buffered billing-on
 * throughput was 3,527 req/s with 4 in flight, 4,027 with 2 and 4,087 with 1.
 */
const MAX_IN_FLIGHT = 2;
const MAX_BATCH = 64;
const BATCH_SQL = "select gw_batch($1::jsonb) as answers";

export class PostgresBatcher {
  #queue: Pending[] = [];
  #scheduled = false;
  #inFlight = 0;

  constructor(
    private readonly db: Kysely<Database>,
    /** Called with the seconds each batch's round trip took (metrics on). */
    private readonly onBatch?: (seconds: number) => void,
  ) {}

  /** Runs one operation in the next batch; `accountId` and `keyId` order it within the batch. */
  call(op: PgOperation, accountId: string, keyId: string | null): Promise<PgAnswer> {
    return new Promise<PgAnswer>((resolve, reject) => {
      this.#queue.push({ op, order: `${accountId}\u0000${keyId ?? ""}`, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= MAX_IN_FLIGHT || this.#queue.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#send();
    });
  }

  #send(): void {
    if (this.#inFlight >= MAX_IN_FLIGHT || this.#queue.length === 0) return;
    const batch = this.#queue.splice(0, MAX_BATCH).sort((x, y) => (x.order < y.order ? -1 : x.order > y.order ? 1 : 0));
    this.#inFlight += 1;
    // #run settles every operation of the batch itself and never rejects.
    void this.#run(batch).finally(() => {
      this.#inFlight -= 1;
      this.#schedule();
    });
    this.#schedule();
  }

  async #run(batch: Pending[]): Promise<void> {
    let answers: unknown;
    try {
      const ops = JSON.stringify(batch.map((p) => p.op));
      const started = this.onBatch === undefined ? 0 : performance.now();
      const result = await this.db.executeQuery(CompiledQuery.raw(BATCH_SQL, [ops]));
      if (this.onBatch !== undefined) this.onBatch((performance.now() - started) / 1000);
      answers = (result.rows[0] as { answers?: unknown } | undefined)?.answers;
    } catch (error) {
      // Unreachable (down, restarting, cut off, timed out): running each operation again on its own
      // would wait out the timeouts once per operation, one after another. Each fails at once; the
      // outcome of one whose answer was lost is settled by the caller (settlement is idempotent by
      // request id, a release changes nothing twice). So do the operations queued behind the batch:
      // sent next, each would wait out a timeout of its own after this one (a request to a host cut
      // off from the database waited twice the query timeout, and was answered late when the cut
      // healed meanwhile). Never sent, they changed nothing; decision 0053.
      if (isDatabaseUnreachable(error)) {
        for (const item of [...batch, ...this.#queue.splice(0)]) item.reject(error);
        return;
      }
      if (batch.length === 1) {
        for (const item of batch) item.reject(error);
        return;
      }
      // One operation raised and the whole batch was rolled back: run each on its own, so that each
      // gets its own answer or error and the others commit.
      for (const item of batch) await this.#run([item]);
      return;
    }
    if (!Array.isArray(answers) || answers.length !== batch.length) {
      // Committed but unreadable (never expected): no retry, which could apply an operation twice.
      const error = new Error("gw_batch answered an unexpected shape");
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => item.resolve((answers as PgAnswer[])[i]!));
  }
}

/** A bigint field as gw_batch reads it: decimal text (null stays null). */
export function pgInteger(value: bigint | null): string | null {
  return value === null ? null : value.toString();
}

const periodFields = new WeakMap<PeriodStarts, PgField>();

/** The periods field of admit and settle ({day, week, month}); periodStarts keeps one object a day, so this is built once a day. */
export function pgPeriods(periods: PeriodStarts): PgField {
  let field = periodFields.get(periods);
  if (field === undefined) periodFields.set(periods, (field = { day: periods.day.toString(), week: periods.week.toString(), month: periods.month.toString() }));
  return field;
}
