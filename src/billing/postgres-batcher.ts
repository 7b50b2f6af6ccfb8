// PostgreSQL group commit for the billing store. Every admission, settlement and release is one
// operation of gw_batch (src/store/migrations/gw-batch-function.ts; the design: migrations 0002 and
// 0003, ADR 0002 and 0009). The batcher sends the operations that queue up while earlier batches
// are in flight as ONE statement, `select gw_batch($1)`, in autocommit: one round trip and one commit
// for the batch, and a busy account row is locked once per batch instead of once per request. The
// commit does not wait for the WAL flush, so the row locks, which serialise one account's batches,
// are not held across it; durability is waited for afterwards, outside the locks, by one flush that
// serves every batch returned before it (postgres-wal-flush.ts, ADR 0028).
//
// Per-request atomicity and the 502 contract: a batch is one transaction. Refusals and replays do not
// raise (they only answer), so in the normal case the whole batch commits. When an operation raises
// (a trigger, a CHECK, a deadlock, GW409, a dropped connection), PostgreSQL rolls the whole statement
// back — nothing of the batch changed — and each operation of the batch is then run again on its own
// (a batch of one), so that each gets exactly its own answer or its own error (with the pg error's
// SQLSTATE as `code`: the caller retries deadlocks and serialization failures and recognises GW409 as
// a replay) and the others commit. There are no subtransactions: see gw_batch in migration 0002.
// Within a batch, gw_batch writes each hot account and key row once (migration 0003).
// Answers are handed out after the statement returned, i.e. after COMMIT: an admission's only once the
// flush that followed has completed too (see durabilityOf below).
//
// Lock order across batches: operations are sent sorted by account id (then key id), and every
// function locks the account row before the key row, so concurrent batches (also from other gateway
// processes) take account locks in one global order and cannot deadlock on them. A deadlock that
// still happens (a hold row, see holds.ts) is detected by PostgreSQL and retried (40P01).
import { CompiledQuery, type Kysely } from "kysely";
import type { Database } from "../store/tables.js";
import { WalFlusher } from "./postgres-wal-flush.js";

export type PgOperationKind = "admit" | "settle" | "release";
/** One operation's answer: flat strings and flags, and an admission refusal's headroom object. */
export type PgAnswer = Record<string, unknown>;

interface Pending {
  kind: PgOperationKind;
  args: readonly unknown[];
  order: string;
  resolve: (answer: PgAnswer) => void;
  reject: (error: unknown) => void;
  /** Set for a settlement answered at its commit whose flush failed: it is being applied again. */
  confirming?: true;
}

/**
 * Batches in flight at once per process. Batches of one busy account wait for each other on its row
 * lock, which is held only until the commit record is written (the WAL flush comes after, see
 * postgres-wal-flush.ts); batches of different accounts run in parallel. At most 2 of the pool's
 * connections (10 by default) plus one for the flush, so other queries (authentication, reads) always
 * find one. Since gw_batch writes a hot row once per batch (migration 0003), bigger batches are
 * cheaper per operation: measured with `bench/profile.ts --database postgres://…` (one account, wrk,
 * 50 connections), buffered billing-on throughput was 3,527 req/s with 4 in flight, 4,027 with 2 and
 * 4,087 with 1 (all with the flush inside the lock).
 */
const MAX_IN_FLIGHT = 2;
const MAX_BATCH = 64;
/**
 * The batch's own commit does not wait for the WAL flush (set_config with is_local: this transaction
 * only; evaluated before the commit whatever the order of the select list): postgres-wal-flush.ts.
 */
const BATCH_SQL = "select gw_batch($1::jsonb) as answers, set_config('synchronous_commit', 'off', true)";
/** Retry delays for a settlement whose flush failed after it was answered (as settlement-retries.ts). */
const CONFIRM_DELAYS_MS = [250, 1_000, 5_000, 15_000, 60_000, 300_000];

/**
 * When an operation's answer is handed out. `flush`: after a WAL flush that covers its commit, so it
 * survives a crash of PostgreSQL or its machine. An admission waits for it: a request is forwarded
 * only once its hold is durable. `commit`: at its commit (visible to every later batch, not yet
 * flushed): a release (lost in a crash, the hold is released again when it expires) and a settlement,
 * whose answer lets the response go out, as on SQLite, whose commits (synchronous = NORMAL) are not
 * flushed either; if the flush that follows fails, the settlement is applied again (idempotent by
 * request id) until an attempt is flushed.
 */
function durabilityOf(kind: PgOperationKind): "flush" | "commit" {
  return kind === "admit" ? "flush" : "commit";
}

export interface PostgresBatcherOptions {
  /** Called with the seconds each batch's round trip took (metrics on). */
  onBatch?: ((seconds: number) => void) | undefined;
  /** Called when a settlement answered at its commit could not be confirmed flushed and is applied again. */
  onSettlementRetry?: ((error: unknown, attempt: number) => void) | undefined;
}

export class PostgresBatcher {
  #queue: Pending[] = [];
  #scheduled = false;
  #inFlight = 0;
  readonly #flusher: WalFlusher;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: PostgresBatcherOptions = {},
  ) {
    this.#flusher = new WalFlusher(db);
  }

  /** Runs one operation in the next batch; `accountId` and `keyId` order it within the batch. */
  call(kind: PgOperationKind, args: readonly unknown[], accountId: string, keyId: string | null): Promise<PgAnswer> {
    return new Promise<PgAnswer>((resolve, reject) => {
      this.#enqueue({ kind, args, order: `${accountId}\u0000${keyId ?? ""}`, resolve, reject });
    });
  }

  #enqueue(pending: Pending): void {
    this.#queue.push(pending);
    this.#schedule();
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
      const ops = JSON.stringify(batch.map((p) => ({ k: p.kind, a: p.args.map(asText) })));
      const started = this.options.onBatch === undefined ? 0 : performance.now();
      const result = await this.db.executeQuery(CompiledQuery.raw(BATCH_SQL, [ops]));
      if (this.options.onBatch !== undefined) this.options.onBatch((performance.now() - started) / 1000);
      answers = (result.rows[0] as { answers?: unknown } | undefined)?.answers;
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
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
    const answered = batch.map((item, i) => ({ item, answer: (answers as PgAnswer[])[i]! }));
    // Sent now (only confirmed later when no answer waits for it), after the commit returned; not
    // awaited here, so that the in-flight slot is free for the next batch while the flush runs.
    const flushed = batch.some(needsFlush) ? this.#flusher.afterNow() : this.#flusher.eventually();
    const waiting: typeof answered = [];
    for (const entry of answered) {
      if (needsFlush(entry.item)) waiting.push(entry);
      else entry.item.resolve(entry.answer);
    }
    flushed.then(
      () => {
        for (const { item, answer } of waiting) item.resolve(answer);
      },
      (error: unknown) => {
        for (const { item } of waiting) item.reject(error);
        for (const { item } of answered) if (item.kind === "settle" && !needsFlush(item)) this.#confirm(item, error, 0);
      },
    );
  }

  /** Waits for the flush that confirms the answers given at their commit (before the pool closes). */
  async confirmCommits(): Promise<void> {
    await this.#flusher.settle();
  }

  /**
   * Applies an already answered settlement again after a delay, until an attempt is flushed: the
   * first attempt's commit may have been lost with PostgreSQL's unflushed WAL. The ledger's unique
   * request id turns an attempt after a durable one into a replay (an answer with recorded=false, or
   * GW409 when the replay undid its own hold deletion), which changes nothing.
   */
  #confirm(settlement: Pending, error: unknown, attempt: number): void {
    this.options.onSettlementRetry?.(error, attempt + 1);
    const delay = CONFIRM_DELAYS_MS[Math.min(attempt, CONFIRM_DELAYS_MS.length - 1)]!;
    const again: Pending = {
      ...settlement,
      confirming: true,
      resolve: () => undefined,
      reject: (next: unknown) => {
        if (String((next as { code?: unknown } | null)?.code ?? "") !== "GW409") this.#confirm(settlement, next, attempt + 1);
      },
    };
    setTimeout(() => this.#enqueue(again), delay).unref();
  }
}

function needsFlush(item: Pending): boolean {
  return item.confirming === true || durabilityOf(item.kind) === "flush";
}

/** Arguments travel as JSON text: bigints (money, tokens, times) never pass through a float. */
function asText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  if (typeof value === "bigint") return value.toString();
  throw new TypeError(`unsupported billing argument of type ${typeof value}`);
}
