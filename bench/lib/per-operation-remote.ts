// The worker's side of the shared SQLite writer as it was before the per-turn messages (ADR 0047's
// first version, commit a70bd6e): one IPC message per operation and one answer per operation. Kept
// only for bench/sqlite-writer-workers.ts, to compare both in one run; the owner's side per operation
// is answerBillingWrite, sent as { type: "billing-answer", ...answer }.
import { GatewayError } from "../../src/errors/catalogue.js";
import type { AdmissionCore } from "../../src/billing/admission.js";
import { AlreadySettled, type SettlementCore } from "../../src/billing/settlement.js";
import { ANSWER_DEADLINE_MS, writerUnavailable } from "../../src/billing/sqlite-billing-remote.js";
import {
  fromWireError,
  type BillingWriteAnswer as OperationAnswer,
  type BillingWriteRequest as Operation,
  type ReserveAnswer,
  type SqliteBillingWrites,
} from "../../src/billing/sqlite-billing-writes.js";

/** Worker to owner: one operation. */
export type BillingWriteRequest = { type: "billing-write" } & Operation;
/** Owner to worker: one answer. */
export type BillingWriteAnswer = { type: "billing-answer" } & OperationAnswer;

interface Pending {
  resolve: (answer: BillingWriteAnswer) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** Distributes the request over Omit so that each variant keeps its own fields. */
type RequestBody = BillingWriteRequest extends infer R ? (R extends BillingWriteRequest ? Omit<R, "type" | "id"> : never) : never;

export class PerOperationRemoteWrites implements SqliteBillingWrites {
  readonly #send: (request: BillingWriteRequest, failed: () => void) => void;
  readonly #deadlineMs: number;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #closed = false;

  /** `send` hands a request to the owner (process.send in a cluster worker) and calls `failed` when it could not be sent (or throws). */
  constructor(send: (request: BillingWriteRequest, failed: () => void) => void, options: { deadlineMs?: number } = {}) {
    this.#send = send;
    this.#deadlineMs = options.deadlineMs ?? ANSWER_DEADLINE_MS;
  }

  /** An answer from the owner (the worker's message listener passes them on). */
  onAnswer(answer: BillingWriteAnswer): void {
    const pending = this.#pending.get(answer.id);
    if (pending === undefined) return; // answered after its deadline: the caller has failed already
    this.#pending.delete(answer.id);
    clearTimeout(pending.timer);
    pending.resolve(answer);
  }

  /** The channel to the owner is gone: every call in flight and every later one fails. */
  close(): void {
    this.#closed = true;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const call of pending) {
      clearTimeout(call.timer);
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

  /** Sends the request; resolves with the owner's answer, rejects with its error or when none comes. */
  #call(body: RequestBody): Promise<BillingWriteAnswer> {
    if (this.#closed) return Promise.reject(writerUnavailable("is gone"));
    const id = this.#nextId++;
    return new Promise<BillingWriteAnswer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(writerUnavailable(`did not answer within ${this.#deadlineMs / 1000} s`));
      }, this.#deadlineMs);
      this.#pending.set(id, {
        resolve: (answer) => ("error" in answer ? reject(fromWireError(answer.error)) : resolve(answer)),
        reject,
        timer,
      });
      const failed = () => {
        if (!this.#pending.delete(id)) return;
        clearTimeout(timer);
        reject(writerUnavailable("cannot be reached"));
      };
      try {
        this.#send({ type: "billing-write", id, ...body }, failed);
      } catch {
        failed();
      }
    });
  }
}

function asGatewayError(error: Error): GatewayError {
  return error instanceof GatewayError ? error : new GatewayError("internal_error");
}

function unexpected(answer: BillingWriteAnswer): Error {
  return new Error(`the billing writer answered request ${answer.id} with another operation's answer`);
}
