// A worker's side of the shared SQLite writer (ADR 0047): each admission, settlement and release is
// sent to the process that owns the database's write connection (the cluster primary) and answered
// after its group transaction committed, or with the error it failed with. The operations issued in
// one event-loop turn travel in one message (and come back in one per owner turn): the IPC cost is
// per batch, not per operation. A worker never answers a request as admitted or charged on its own:
// no answer, no hold, no charge.
// - No answer within ANSWER_DEADLINE_MS (the owner stopped, or is stuck): the call fails with
//   ledger_write_failed, code billing_writer_unavailable. What the owner commits afterwards is safe:
//   a late hold is released by the sweeper when it expires, a late charge is found by the retry of
//   the settlement (settlement-retries.ts) as a replay, and charged once. The deadline runs from the
//   moment the call joined its batch; one timer serves the batch.
// - The channel closes (the owner exited): every call in flight and every later one fails the same
//   way at once (node:cluster then ends the worker too).
import { GatewayError } from "../errors/catalogue.js";
import type { AdmissionCore } from "./admission.js";
import { AlreadySettled, type SettlementCore } from "./settlement.js";
import {
  fromWireError,
  TurnBatch,
  type BillingAnswerBatch,
  type BillingWriteAnswer,
  type BillingWriteBatch,
  type BillingWriteRequest,
  type ReserveAnswer,
  type SqliteBillingWrites,
} from "./sqlite-billing-writes.js";

/**
 * How long a call waits for the owner's answer: well beyond the owner's own wait for the write lock
 * (the connection's busy_timeout, 5 s) and a batch's run, and a loaded machine's stalls (10 s was
 * reached on an oversubscribed 2-core CI machine), so that only an owner that stopped reaches it.
 */
export const ANSWER_DEADLINE_MS = 30_000;

/** The calls sent in one message: one deadline timer for all of them, cleared when the last is answered. */
interface SentBatch {
  unanswered: number;
  timer: NodeJS.Timeout | undefined;
}

interface Pending {
  resolve: (answer: BillingWriteAnswer) => void;
  reject: (error: Error) => void;
  batch: SentBatch;
}

/** Distributes the request over Omit so that each variant keeps its own fields. */
type RequestBody = BillingWriteRequest extends infer R ? (R extends BillingWriteRequest ? Omit<R, "id"> : never) : never;

export function writerUnavailable(why: string): GatewayError {
  return new GatewayError("ledger_write_failed", `The billing database's writer ${why}; nothing was charged.`, { code: "billing_writer_unavailable" });
}

export class RemoteSqliteBillingWrites implements SqliteBillingWrites {
  readonly #send: (batch: BillingWriteBatch, failed: () => void) => void;
  readonly #deadlineMs: number;
  readonly #pending = new Map<number, Pending>();
  /** The calls of this turn, sent together when it ends. */
  readonly #outbox: TurnBatch<BillingWriteRequest>;
  /** The batch that the calls of this turn join. */
  #current: SentBatch | undefined;
  #nextId = 1;
  #closed = false;

  /** `send` hands a message to the owner (process.send in a cluster worker) and calls `failed` when it could not be sent (or throws). */
  constructor(send: (batch: BillingWriteBatch, failed: () => void) => void, options: { deadlineMs?: number } = {}) {
    this.#send = send;
    this.#deadlineMs = options.deadlineMs ?? ANSWER_DEADLINE_MS;
    this.#outbox = new TurnBatch((items) => this.#sendBatch(items));
  }

  /** The answers of a message from the owner (the worker's message listener passes them on). */
  onAnswers(message: BillingAnswerBatch): void {
    for (const answer of message.answers) {
      const pending = this.#pending.get(answer.id);
      if (pending === undefined) continue; // answered after its deadline: the caller has failed already
      this.#pending.delete(answer.id);
      this.#answered(pending.batch);
      pending.resolve(answer);
    }
  }

  /** The channel to the owner is gone: every call in flight and every later one fails. */
  close(): void {
    this.#closed = true;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const call of pending) {
      clearTimeout(call.batch.timer);
      call.reject(writerUnavailable("is gone"));
    }
  }

  async reserve(reservation: AdmissionCore): Promise<ReserveAnswer> {
    const { request } = reservation;
    // Only what the statements read: the request's model config stays in the worker.
    const core: AdmissionCore = {
      ...reservation,
      request: {
        requestId: request.requestId,
        accountId: request.accountId,
        keyId: request.keyId,
        route: request.route,
        ...(request.limits !== undefined && { limits: request.limits }),
        ...(request.budgets !== undefined && { budgets: request.budgets }),
        ...(request.tags !== undefined && { tags: request.tags }),
      },
    };
    const answer = await this.#call({ op: "reserve", reservation: core });
    if (!("reserved" in answer)) throw unexpected(answer);
    const reserved = answer.reserved;
    return "refusal" in reserved ? { refusal: asGatewayError(fromWireError(reserved.refusal)) } : reserved;
  }

  async settle(input: SettlementCore): Promise<AlreadySettled | undefined> {
    const { hold } = input;
    const core: SettlementCore = {
      usage: input.usage,
      provider: input.provider,
      cost: input.cost,
      breakdown: input.breakdown,
      now: input.now,
      hold: {
        id: hold.id,
        requestId: hold.requestId,
        accountId: hold.accountId,
        keyId: hold.keyId,
        route: hold.route,
        model: { id: hold.model.id, deployment: hold.model.deployment, priceFactorPpm: hold.model.priceFactorPpm },
        ...(hold.attempts !== undefined && { attempts: hold.attempts }),
        ...(hold.budgets !== undefined && { budgets: hold.budgets }),
        ...(hold.tags !== undefined && { tags: hold.tags }),
      },
    };
    const answer = await this.#call({ op: "settle", input: core });
    if (!("settled" in answer)) throw unexpected(answer);
    return answer.settled === null ? undefined : new AlreadySettled(hold.requestId, answer.settled.replayCost ?? undefined);
  }

  async release(holdId: string, expiredBefore?: number): Promise<boolean> {
    const answer = await this.#call({ op: "release", holdId, expiredBefore: expiredBefore ?? null });
    if (!("released" in answer)) throw unexpected(answer);
    return answer.released;
  }

  /** Queues the request for this turn's message; resolves with the owner's answer, rejects with its error or when none comes. */
  #call(body: RequestBody): Promise<BillingWriteAnswer> {
    if (this.#closed) return Promise.reject(writerUnavailable("is gone"));
    const id = this.#nextId++;
    let batch = this.#current;
    if (batch === undefined) {
      const started: SentBatch = { unanswered: 0, timer: undefined };
      started.timer = setTimeout(() => this.#expire(started), this.#deadlineMs);
      this.#current = batch = started;
    }
    batch.unanswered += 1;
    return new Promise<BillingWriteAnswer>((resolve, reject) => {
      this.#pending.set(id, { resolve: (answer) => ("error" in answer ? reject(fromWireError(answer.error)) : resolve(answer)), reject, batch });
      this.#outbox.add({ id, ...body });
    });
  }

  /** End of the turn: one message with every call of it still waiting (none once the channel closed). */
  #sendBatch(items: BillingWriteRequest[]): void {
    this.#current = undefined;
    const requests = items.filter((request) => this.#pending.has(request.id));
    if (requests.length === 0) return;
    const failed = () => this.#fail(requests, writerUnavailable("cannot be reached"));
    try {
      this.#send({ type: "billing-writes", requests }, failed);
    } catch {
      failed();
    }
  }

  /** No answer within the deadline: every call of the batch still waiting fails. */
  #expire(batch: SentBatch): void {
    if (this.#current === batch) this.#current = undefined;
    const error = writerUnavailable(`did not answer within ${this.#deadlineMs / 1000} s`);
    for (const [id, pending] of this.#pending) {
      if (pending.batch !== batch) continue;
      this.#pending.delete(id);
      pending.reject(error);
    }
  }

  #fail(requests: BillingWriteRequest[], error: Error): void {
    for (const { id } of requests) {
      const pending = this.#pending.get(id);
      if (pending === undefined) continue;
      this.#pending.delete(id);
      this.#answered(pending.batch);
      pending.reject(error);
    }
  }

  #answered(batch: SentBatch): void {
    batch.unanswered -= 1;
    if (batch.unanswered === 0) clearTimeout(batch.timer);
  }
}

function asGatewayError(error: Error): GatewayError {
  return error instanceof GatewayError ? error : new GatewayError("internal_error");
}

function unexpected(answer: BillingWriteAnswer): Error {
  return new Error(`the billing writer answered request ${answer.id} with another operation's answer`);
}
