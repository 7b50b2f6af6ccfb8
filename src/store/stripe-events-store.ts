// Stripe events (migration 0032; docs/billing.md, "Card top-ups"; ADR 0039). Each verified event is
// applied in one transaction: its row in stripe_events (the event id UNIQUE: the claim), the ledger
// credit or debit through AccountsStore.adjustBalance (the path of administrator credits and
// redemption codes), and its audit row. A retried event, or the same event delivered to two
// processes at once, finds the row (on PostgreSQL the second INSERT waits for the first's commit and
// then inserts nothing) and changes nothing; a transaction that fails leaves none of the three.
import type { Kysely, Selectable, Transaction } from "kysely";
import { nowMs } from "../core/ids.js";
import { formatUsd, type Nano } from "../core/money.js";
import { GatewayError } from "../errors/catalogue.js";
import { AccountsStore } from "./accounts-store.js";
import { appendAudit, type AuditActor } from "./audit-store.js";
import type { Database, StripeEventStatus, StripeEventsTable } from "./tables.js";
import { transact } from "./transact.js";

/** Stripe's amounts are integer cents; one cent is 10,000,000 nano-USD, exactly. */
export const NANO_PER_CENT = 10_000_000n;

export const STRIPE_EVENT_STATUSES: readonly StripeEventStatus[] = ["credited", "debited", "pending", "confirmed", "dismissed", "ignored"];

interface EventBase {
  eventId: string;
  type: string;
  /** The event's `created` (epoch ms); null when absent. */
  createdAt: number | null;
}

/** What a verified event asks the gateway to do (src/billing/stripe-events.ts reads it from the payload). */
export type StripeMoneyEvent =
  | (EventBase & { kind: "credit"; sessionId: string; accountId: string | null; paymentIntent: string | null; cents: bigint })
  | (EventBase & { kind: "refund"; chargeId: string; paymentIntent: string | null; refundedCents: bigint })
  | (EventBase & { kind: "dispute"; disputeId: string; paymentIntent: string | null; cents: bigint; reason: string })
  | (EventBase & { kind: "ignore"; objectId: string; reason: string });

export interface StripeEventRecord {
  id: string;
  type: string;
  objectId: string;
  accountId: string | null;
  paymentIntent: string | null;
  amount: Nano;
  applied: Nano;
  status: StripeEventStatus;
  reason: string | null;
  stripeCreatedAt: number | null;
  receivedAt: number;
  resolvedAt: number | null;
  resolvedBy: string | null;
}

/** The event's record, and whether this delivery applied it (false: it had been applied before). */
export interface StripeEventOutcome {
  record: StripeEventRecord;
  duplicate: boolean;
}

/** Test hook: fail the event's transaction after its ledger row, once (nothing may remain of it). */
export type StripeFaultPoint = "after_ledger";

function toRecord(row: Selectable<StripeEventsTable>): StripeEventRecord {
  return {
    id: row.id,
    type: row.type,
    objectId: row.object_id,
    accountId: row.account_id,
    paymentIntent: row.payment_intent,
    amount: BigInt(row.amount_nano),
    applied: BigInt(row.applied_nano),
    status: row.status,
    reason: row.reason,
    stripeCreatedAt: row.stripe_created_at === null ? null : Number(row.stripe_created_at),
    receivedAt: Number(row.received_at),
    resolvedAt: row.resolved_at === null ? null : Number(row.resolved_at),
    resolvedBy: row.resolved_by,
  };
}

/** The audit row's fields of an event (money as decimal strings). */
function auditFields(record: StripeEventRecord): Record<string, unknown> {
  return {
    type: record.type,
    object_id: record.objectId,
    account_id: record.accountId,
    status: record.status,
    amount_usd: formatUsd(record.amount),
    applied_usd: formatUsd(record.applied),
    reason: record.reason,
  };
}

type Planned = Omit<Selectable<StripeEventsTable>, "refunded_cents"> & { refunded_cents: bigint };

export class StripeEventsStore {
  /** Test hook (StripeFaultPoint), cleared when it fires; null in production. */
  failOnce: StripeFaultPoint | null = null;

  constructor(private readonly db: Kysely<Database>) {}

  /** Applies a verified event once; a second delivery of its id returns the first's record. */
  async apply(event: StripeMoneyEvent, actor: AuditActor): Promise<StripeEventOutcome> {
    return transact(this.db, async (trx) => {
      const seen = await trx.selectFrom("stripe_events").selectAll().where("id", "=", event.eventId).executeTakeFirst();
      if (seen) return { record: toRecord(seen), duplicate: true };
      const planned = await this.#plan(trx, event);
      const claimed = await trx
        .insertInto("stripe_events")
        .values(planned)
        .onConflict((oc) => oc.doNothing())
        .returning("id")
        .executeTakeFirst();
      if (!claimed) {
        // Another delivery of this event committed first, or (a credit) another event credited this session.
        const again = await trx.selectFrom("stripe_events").selectAll().where("id", "=", event.eventId).executeTakeFirst();
        if (again) return { record: toRecord(again), duplicate: true };
        const ignored = { ...planned, checkout_session: null, status: "ignored" as const, applied_nano: 0n, reason: "the Checkout Session was credited by another event" };
        await trx.insertInto("stripe_events").values(ignored).execute();
        return this.#finish(trx, ignored, actor);
      }
      const row = await this.#writeLedger(trx, planned, event);
      return this.#finish(trx, row, actor);
    });
  }

  async get(id: string): Promise<StripeEventRecord | null> {
    const row = await this.db.selectFrom("stripe_events").selectAll().where("id", "=", id).executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Newest first; `before` continues from the last record of the previous page (its received_at and id). */
  async list(options: { status?: StripeEventStatus; limit?: number; before?: { receivedAt: bigint; id: string } } = {}): Promise<StripeEventRecord[]> {
    let query = this.db
      .selectFrom("stripe_events")
      .selectAll()
      .orderBy("received_at", "desc")
      .orderBy("id", "desc")
      .limit(options.limit ?? 100);
    if (options.status !== undefined) query = query.where("status", "=", options.status);
    if (options.before) {
      const { receivedAt, id } = options.before;
      query = query.where((eb) => eb.or([eb("received_at", "<", receivedAt), eb.and([eb("received_at", "=", receivedAt), eb("id", "<", id)])]));
    }
    return (await query.execute()).map(toRecord);
  }

  /**
   * The operator's answer to a pending event, audited with `actor`. confirm: a pending debit takes
   * what the balance holds, up to its amount (the balance never goes below zero: a database
   * invariant), a pending credit is tried again; dismiss: nothing reaches the ledger. Not pending: invalid_state.
   */
  async resolve(id: string, decision: "confirm" | "dismiss", actor: AuditActor): Promise<StripeEventRecord> {
    return transact(this.db, async (trx) => {
      const now = nowMs();
      const status = decision === "confirm" ? "confirmed" : "dismissed";
      const taken = await trx
        .updateTable("stripe_events")
        .set({ status, resolved_at: now, resolved_by: actor.name ?? actor.id })
        .where("id", "=", id)
        .where("status", "=", "pending")
        .returningAll()
        .executeTakeFirst();
      if (!taken) {
        const row = await trx.selectFrom("stripe_events").select("status").where("id", "=", id).executeTakeFirst();
        if (!row) throw new GatewayError("not_found", `No Stripe event ${id}.`);
        throw new GatewayError("invalid_state", `The Stripe event is ${row.status}, not pending; only a pending event is confirmed or dismissed.`);
      }
      let applied = 0n;
      if (decision === "confirm" && taken.account_id !== null) applied = await confirmPending(trx, taken);
      const row = applied === 0n ? taken : await trx.updateTable("stripe_events").set({ applied_nano: applied }).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
      const record = toRecord(row);
      await appendAudit(trx, actor, {
        action: `stripe.${decision}`,
        targetType: "stripe_event",
        targetId: id,
        before: { status: "pending" },
        after: auditFields(record),
      });
      return record;
    });
  }

  /** The row an event will be recorded as, decided from the database's state inside the transaction. */
  async #plan(trx: Transaction<Database>, event: StripeMoneyEvent): Promise<Planned> {
    const base = {
      id: event.eventId,
      type: event.type,
      account_id: null as string | null,
      payment_intent: null as string | null,
      checkout_session: null as string | null,
      amount_nano: 0n,
      applied_nano: 0n,
      refunded_cents: 0n,
      reason: null as string | null,
      stripe_created_at: event.createdAt === null ? null : BigInt(event.createdAt),
      received_at: nowMs(),
      resolved_at: null,
      resolved_by: null,
    };
    switch (event.kind) {
      case "ignore":
        return { ...base, object_id: event.objectId, status: "ignored", reason: event.reason };
      case "credit": {
        const planned = { ...base, object_id: event.sessionId, account_id: event.accountId, payment_intent: event.paymentIntent, amount_nano: event.cents * NANO_PER_CENT };
        const account = event.accountId === null ? undefined : await trx.selectFrom("accounts").select("id").where("id", "=", event.accountId).executeTakeFirst();
        if (!account) return { ...planned, status: "ignored", reason: `no account ${event.accountId ?? "(none given)"}` };
        if (event.cents <= 0n) return { ...planned, status: "ignored", reason: "nothing was paid" };
        return { ...planned, checkout_session: event.sessionId, status: "credited", applied_nano: planned.amount_nano };
      }
      case "refund":
      case "dispute":
        return this.#planDebit(trx, event, base);
    }
  }

  async #planDebit(trx: Transaction<Database>, event: Extract<StripeMoneyEvent, { kind: "refund" | "dispute" }>, base: Omit<Planned, "object_id" | "status">): Promise<Planned> {
    const objectId = event.kind === "refund" ? event.chargeId : event.disputeId;
    const planned = { ...base, object_id: objectId, payment_intent: event.paymentIntent };
    const credit =
      event.paymentIntent === null
        ? undefined
        : await trx
            .selectFrom("stripe_events")
            .select(["id", "account_id", "status"])
            .where("payment_intent", "=", event.paymentIntent)
            .where("checkout_session", "is not", null)
            .executeTakeFirst();
    if (!credit || (credit.status !== "credited" && credit.status !== "confirmed")) {
      return { ...planned, status: "ignored", reason: "not a top-up this gateway credited" };
    }
    let cents: bigint;
    let reason: string;
    if (event.kind === "refund") {
      // Refunds of one charge one at a time: the credit row is the lock (a no-op write on PostgreSQL).
      await trx
        .updateTable("stripe_events")
        .set((eb) => ({ refunded_cents: eb.ref("refunded_cents") }))
        .where("id", "=", credit.id)
        .execute();
      const { refunded_cents: before } = await trx.selectFrom("stripe_events").select("refunded_cents").where("id", "=", credit.id).executeTakeFirstOrThrow();
      cents = event.refundedCents - BigInt(before);
      if (cents <= 0n) return { ...planned, account_id: credit.account_id, status: "ignored", reason: "refunded before" };
      await trx.updateTable("stripe_events").set({ refunded_cents: event.refundedCents }).where("id", "=", credit.id).execute();
      reason = `refund of ${event.chargeId}`;
    } else {
      cents = event.cents;
      reason = `dispute ${event.disputeId}: ${event.reason}`;
    }
    const amount = cents * NANO_PER_CENT;
    const withAmount = { ...planned, account_id: credit.account_id, amount_nano: amount, reason };
    const account = await trx.selectFrom("accounts").select("balance_nano").where("id", "=", credit.account_id!).executeTakeFirst();
    if (!account) return { ...withAmount, status: "ignored", reason: `${reason}; the account no longer exists` };
    if (BigInt(account.balance_nano) < amount) return { ...withAmount, status: "pending", reason: `${reason}; the balance does not cover it: waiting for the operator` };
    return { ...withAmount, status: "debited", applied_nano: amount };
  }

  /** The ledger row of a credited or debited event; a credit past the balance ceiling becomes pending instead. */
  async #writeLedger(trx: Transaction<Database>, row: Planned, event: StripeMoneyEvent): Promise<Planned> {
    if (row.status !== "credited" && row.status !== "debited") return row;
    const accounts = new AccountsStore(trx);
    const delta = row.status === "credited" ? row.amount_nano : -row.amount_nano;
    try {
      await accounts.adjustBalance(row.account_id!, delta, ledgerNote(row));
    } catch (error) {
      if (!(error instanceof GatewayError && error.type === "balance_invariant")) throw error;
      // The UPDATE matched no row (no SQL error): the transaction goes on, the event waits for the operator.
      const reason =
        row.status === "credited"
          ? "the credit would put the balance past its ceiling: waiting for the operator"
          : `${row.reason}; the balance does not cover it: waiting for the operator`;
      const pending = { ...row, status: "pending" as const, applied_nano: 0n, reason };
      await trx.updateTable("stripe_events").set({ status: "pending", applied_nano: 0n, reason }).where("id", "=", row.id).execute();
      return pending;
    }
    if (this.failOnce === "after_ledger") {
      this.failOnce = null;
      throw new Error(`injected failure after the ledger row of ${event.eventId}`);
    }
    return row;
  }

  async #finish(trx: Transaction<Database>, row: Planned, actor: AuditActor): Promise<StripeEventOutcome> {
    const record = toRecord(row);
    await appendAudit(trx, actor, { action: "stripe.event", targetType: "stripe_event", targetId: record.id, before: null, after: auditFields(record) });
    return { record, duplicate: false };
  }
}

/** The ledger note of an event's row: what Stripe object it came from (never card or customer data). */
function ledgerNote(row: Planned): string {
  return row.status === "credited" ? `stripe top-up ${row.object_id} (${row.id})` : `stripe ${row.reason ?? row.type} (${row.id})`;
}

/** A confirmed pending event's ledger row: a debit takes what the balance holds (up to its amount), a credit is tried again. */
async function confirmPending(trx: Transaction<Database>, row: Selectable<StripeEventsTable>): Promise<Nano> {
  const accounts = new AccountsStore(trx);
  const amount = BigInt(row.amount_nano);
  const note = `stripe ${row.type} ${row.object_id} (${row.id}), confirmed by the operator`;
  if (row.checkout_session !== null) {
    await accounts.adjustBalance(row.account_id!, amount, note);
    return amount;
  }
  const account = await trx.selectFrom("accounts").select("balance_nano").where("id", "=", row.account_id!).executeTakeFirst();
  if (!account) throw new GatewayError("account_not_found", `no account ${row.account_id}`);
  const debit = BigInt(account.balance_nano) < amount ? BigInt(account.balance_nano) : amount;
  if (debit > 0n) await accounts.adjustBalance(row.account_id!, -debit, note);
  return debit;
}
