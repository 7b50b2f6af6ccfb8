// The billing writes on SQLite (admission, settlement, release) as three operations with serialisable
// inputs and answers, so that they can run in this process (LocalSqliteBillingWrites: its own
// SqliteWriter) or in another one that owns the database's write connection for every worker of a
// `gateway serve --workers N` (the cluster primary, ADR 0047; the worker's side is
// sqlite-billing-remote.ts). The messages carry the operations' inputs, never closures: what the
// primary runs is exactly reserveSqlite, applySettlementSqlite and releaseHoldSqlite, through the same
// group commit (sqlite-writer.ts), so batches span every worker's requests.
import type { DatabaseHandle } from "../store/database.js";
import { SqliteWriter } from "../store/sqlite-writer.js";
import { GatewayError, type ErrorDetails, type ErrorType } from "../errors/catalogue.js";
import type { TrafficStatus } from "../core/rate-limit-headers.js";
import { LimitRefusal, type AdmissionCore, type Headroom } from "./admission.js";
import { reserveSqlite } from "./admission-sqlite.js";
import { applySettlementSqlite } from "./settlement-sqlite.js";
import { releaseHoldSqlite } from "./holds.js";
import { AlreadySettled, type SettlementInput, type SettlementCore } from "./settlement.js";
import type { Nano } from "../core/money.js";

/** What an admission answers: the hold's traffic figures, or the refusal. */
export type ReserveAnswer = { status: TrafficStatus | null } | { refusal: GatewayError };

/** The billing writes of one SQLite database; each resolves after its transaction committed. */
export interface SqliteBillingWrites {
  reserve(reservation: AdmissionCore): Promise<ReserveAnswer>;
  /** undefined when recorded; an AlreadySettled (returned) for a replay that changed nothing. */
  settle(input: SettlementCore): Promise<AlreadySettled | undefined>;
  /** False when the hold was already gone (or, with expiredBefore, the sweep's time: neither expired by then nor left by a dead holder). */
  release(holdId: string, expiredBefore?: number): Promise<boolean>;
}

/** The writes run by this process's own group-commit writer. */
export class LocalSqliteBillingWrites implements SqliteBillingWrites {
  readonly #writer: SqliteWriter;
  readonly #context: Pick<SettlementInput, "dimensions" | "chain">;

  constructor(database: Pick<DatabaseHandle, "db" | "sqlite" | "dimensions" | "ledgerChain">, options: { onBatch?: ((seconds: number) => void) | undefined } = {}) {
    if (!database.sqlite) throw new Error("the SQLite billing writes need the raw connection (DatabaseHandle.sqlite)");
    this.#writer = new SqliteWriter(database.db, database.sqlite, options);
    this.#context = { dimensions: database.dimensions, chain: database.ledgerChain };
  }

  async reserve(reservation: AdmissionCore): Promise<ReserveAnswer> {
    const outcome = await this.#writer.run((exec) => reserveSqlite(exec, reservation));
    return outcome instanceof GatewayError ? { refusal: outcome } : { status: outcome };
  }

  settle(input: SettlementCore): Promise<AlreadySettled | undefined> {
    // The database's own dimensions and chain: those of the process that writes the row.
    const full = { ...input, ...this.#context };
    return this.#writer.run((exec) => applySettlementSqlite(exec, full));
  }

  release(holdId: string, expiredBefore?: number): Promise<boolean> {
    return this.#writer.run((exec) => releaseHoldSqlite(exec, holdId, expiredBefore));
  }
}

// The IPC messages (node:cluster with serialization "advanced": bigints and plain objects travel as
// they are; class instances do not, hence the error shapes below). A worker sends every operation it
// issued in one event-loop turn in one message, and the owner answers every operation of a worker
// that it committed in one turn in one message (TurnBatch below): per message, the pipe write and the
// wake-up of the other process cost more than the encoding (bench/results/history/2026-11-29T1616-sqlite-ipc-batches.md).

/** One operation of a worker, with the id its answer carries. */
export type BillingWriteRequest = { id: number } & (
  { op: "reserve"; reservation: AdmissionCore } | { op: "settle"; input: SettlementCore } | { op: "release"; holdId: string; expiredBefore: number | null }
);

/** Worker to writer owner: the operations of one turn. */
export type BillingWriteBatch = { type: "billing-writes"; requests: BillingWriteRequest[] };

/** An error as it crosses the channel: a gateway error keeps its type, details and headroom; every other its message and code. */
export type WireError =
  { gateway: { type: ErrorType; message: string; details: ErrorDetails; headroom: Headroom | null | undefined } } | { failure: { message: string; code: string | undefined } };

export type WireReserveAnswer = { status: TrafficStatus | null } | { refusal: WireError };

/** The answer to one operation, after its transaction committed (or its error). */
export type BillingWriteAnswer = { id: number } & (
  { reserved: WireReserveAnswer } | { settled: { replayCost: Nano | null } | null } | { released: boolean } | { error: WireError }
);

/** Writer owner to worker: the answers of one turn. */
export type BillingAnswerBatch = { type: "billing-answers"; answers: BillingWriteAnswer[] };

/** Collects items through the rest of this event-loop turn and hands them over together. */
export class TurnBatch<T> {
  #items: T[] = [];
  readonly #deliver: (items: T[]) => void;

  constructor(deliver: (items: T[]) => void) {
    this.#deliver = deliver;
  }

  add(item: T): void {
    // setImmediate, not a microtask: the callers' promise chains of this turn all join the batch.
    if (this.#items.length === 0) setImmediate(() => this.#flush());
    this.#items.push(item);
  }

  #flush(): void {
    const items = this.#items;
    this.#items = [];
    this.#deliver(items);
  }
}

export function toWireError(error: unknown): WireError {
  if (error instanceof GatewayError) {
    return { gateway: { type: error.type, message: error.message, details: error.details, headroom: error instanceof LimitRefusal ? error.headroom : undefined } };
  }
  const code = (error as { code?: unknown } | null)?.code;
  return { failure: { message: error instanceof Error ? error.message : String(error), code: code === undefined ? undefined : String(code) } };
}

export function fromWireError(wire: WireError): Error {
  if ("gateway" in wire) {
    const base = new GatewayError(wire.gateway.type, wire.gateway.message, wire.gateway.details);
    return wire.gateway.headroom === undefined ? base : new LimitRefusal(base, wire.gateway.headroom);
  }
  // The code travels: SQLITE_BUSY stays a transient error for StoreBilling's retry.
  return Object.assign(new Error(wire.failure.message), wire.failure.code === undefined ? {} : { code: wire.failure.code });
}

/**
 * The writer owner's side for one worker: runs the operations of each of its messages on `writes`
 * (they join the writer's next group transaction) and sends their answers, each after its COMMIT,
 * in one message per turn.
 */
export class BillingWriteAnswerer {
  readonly #writes: SqliteBillingWrites;
  readonly #outbox: TurnBatch<BillingWriteAnswer>;

  /** `send` hands a message of answers to the worker (it must not throw). */
  constructor(writes: SqliteBillingWrites, send: (batch: BillingAnswerBatch) => void) {
    this.#writes = writes;
    this.#outbox = new TurnBatch((answers) => send({ type: "billing-answers", answers }));
  }

  onRequests(batch: BillingWriteBatch): void {
    for (const request of batch.requests) void answerBillingWrite(this.#writes, request).then((answer) => this.#outbox.add(answer));
  }
}

/** Runs one operation on `writes` and answers it (never throws). */
export async function answerBillingWrite(writes: SqliteBillingWrites, request: BillingWriteRequest): Promise<BillingWriteAnswer> {
  const id = request.id;
  try {
    switch (request.op) {
      case "reserve": {
        const answer = await writes.reserve(request.reservation);
        return { id, reserved: "refusal" in answer ? { refusal: toWireError(answer.refusal) } : answer };
      }
      case "settle": {
        const replay = await writes.settle(request.input);
        return { id, settled: replay === undefined ? null : { replayCost: replay.recordedCost ?? null } };
      }
      case "release":
        return { id, released: await writes.release(request.holdId, request.expiredBefore ?? undefined) };
    }
  } catch (error) {
    return { id, error: toWireError(error) };
  }
}
