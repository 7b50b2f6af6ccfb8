// Balance escrow on PostgreSQL (ADR 0048, docs/billing.md "Balance escrow"). Every gw_batch call that
// admits for an account locks the account's row until its commit, so gateway processes admitting
// for one busy account wait for each other. Here each process (the holder) keeps a bounded slice of
// the account's available balance (account_escrows, counted in accounts.held_nano), admits in memory
// against it, and changes the slice only in operations of the batches it already sends
// (escrow-functions.ts): a refill when the slice runs low, a settlement taking its hold's amount out.
//
// Only a request the balance alone decides comes from a slice: no traffic limits, no budget scopes,
// no hold lifetime of its own (video tasks), and an account and key the database called plain (no
// monthly budget, caps or periodic budget; active and enabled) within the last `plainMs`, in an
// answer of this process's own batches. Everything else, and every request a slice cannot cover,
// takes the central path exactly as before.
//
// What this process believes a slice holds is never more than the database row holds: a refill
// counts only after its commit, a settlement or a trim counts before; one escrow operation per
// account is in flight at a time. A slice is usable only within its lease less a third (the sweeper
// gives back slices past their lease, left by a process that died: its requests in flight died with it).
import { randomUUID } from "node:crypto";
import { CompiledQuery, type Kysely } from "kysely";
import type { Database } from "../store/tables.js";
import { holdOf, type Reservation } from "./admission.js";
import type { PgAnswer, PostgresBatcher } from "./postgres-batcher.js";
import type { Hold } from "./types.js";

export interface EscrowOptions {
  /** The most a refill asks for, nano-USD (default 10 USD). */
  maxSliceNano?: bigint;
  /** A refill asks for this many of the triggering request's amount (default 32). */
  sliceRequests?: number;
  /** The lease of a slice, ms (default 30 s): how long a dead process's slice stays out. */
  leaseMs?: number;
  /** How often leases are renewed and recalls looked for, ms (default 100). */
  tickMs?: number;
  /** A slice unused this long, with nothing in flight, is given back, ms (default 10 s). */
  idleMs?: number;
  /** How long the database's word that an account and key are plain stays good, ms (default 1 s). */
  plainMs?: number;
}

interface Slice {
  /** What the row holds, as far as this process knows: never more than it does. */
  amount: bigint;
  /** The amounts of this process's requests in flight admitted from the slice. */
  outstanding: bigint;
  /** Until when (epoch ms) local admissions may use it: the lease as last renewed, less a third. */
  usableUntil: number;
  lastUse: number;
  /** What the next refill asks for beyond what is in flight. */
  want: bigint;
  /** The escrow operation in flight, if any (one at a time). */
  busy: Promise<void> | null;
}

const KEY_SEPARATOR = "\u0000";
const RENEW_SQL = `update account_escrows set expires_at = $1 where holder = $2 and account_id in
  (select account_id from account_escrows where holder = $2 and account_id = any($3::text[]) order by account_id for update)`;
/** Orders an escrow operation after the account's admissions and settlements in a batch (postgres-batcher.ts sorts by account, then key). */
const AFTER_KEYS = "\uffff";

export class PostgresEscrow {
  /** This process's name on its rows; new at every start, so a restarted process never takes over a dead one's slice. */
  readonly holder = `esc_${randomUUID()}`;
  readonly #slices = new Map<string, Slice>();
  /** account \0 key -> until when (epoch ms) the database's word that both are plain stays good. */
  readonly #plain = new Map<string, number>();
  /** Holds admitted from a slice: hold id -> account and amount. */
  readonly #local = new Map<string, { accountId: string; amount: bigint }>();
  readonly #maxSlice: bigint;
  readonly #sliceRequests: bigint;
  readonly #leaseMs: number;
  readonly #idleMs: number;
  readonly #plainMs: number;
  readonly #timer: NodeJS.Timeout;
  #ticking: Promise<void> | null = null;
  #closed = false;

  constructor(
    private readonly batcher: PostgresBatcher,
    private readonly db: Kysely<Database>,
    private readonly now: () => number,
    options: EscrowOptions = {},
  ) {
    this.#maxSlice = options.maxSliceNano ?? 10_000_000_000n;
    this.#sliceRequests = BigInt(options.sliceRequests ?? 32);
    this.#leaseMs = options.leaseMs ?? 30_000;
    this.#idleMs = options.idleMs ?? 10_000;
    this.#plainMs = options.plainMs ?? 1_000;
    this.#timer = setInterval(() => {
      if (this.#ticking === null && this.#slices.size > 0) this.#ticking = this.#tick().finally(() => (this.#ticking = null));
    }, options.tickMs ?? 100);
    this.#timer.unref();
  }

  /** A hold admitted from this process's slice, or null: the central path decides (and a refill may be on its way). */
  admit(r: Reservation, ownLifetime: boolean): Hold | null {
    const { request, amount } = r;
    if (this.#closed || ownLifetime || (request.limits?.length ?? 0) > 0 || (request.budgets?.length ?? 0) > 0) return null;
    if ((this.#plain.get(request.accountId + KEY_SEPARATOR + request.keyId) ?? 0) < r.now) return null;
    const slice = this.#slices.get(request.accountId);
    if (slice !== undefined && slice.usableUntil > r.now && slice.amount - slice.outstanding >= amount) {
      slice.outstanding += amount;
      slice.lastUse = r.now;
      this.#local.set(r.holdId, { accountId: request.accountId, amount });
      if (slice.amount - slice.outstanding < slice.want / 2n) this.#refill(request.accountId, amount);
      return holdOf(r, null);
    }
    this.#refill(request.accountId, amount);
    return null;
  }

  /** Reads a central admission's or settlement's answer: whether the account and key are plain. */
  noteAnswer(accountId: string, keyId: string | null, answer: PgAnswer, amount: bigint): void {
    if (keyId === null || answer.plain === undefined) return;
    const pair = accountId + KEY_SEPARATOR + keyId;
    if (answer.plain !== true) {
      this.#plain.delete(pair);
      return;
    }
    const fresh = !this.#plain.has(pair);
    this.#plain.set(pair, this.now() + this.#plainMs);
    if (fresh && amount > 0n) this.#refill(accountId, amount);
  }

  /** The settle operation's fields for a hold admitted from a slice ({} for any other). */
  settleFields(hold: Hold): { escrow: string; escrow_amount: string } | Record<string, never> {
    const local = this.#local.get(hold.id);
    return local === undefined ? {} : { escrow: this.holder, escrow_amount: local.amount.toString() };
  }

  /**
   * After a settlement of `hold` was attempted, whatever its outcome: the slice no longer counts the
   * hold's amount (its row did lose it, or keeps more than this process counts: never less).
   */
  settled(hold: Hold): void {
    const local = this.#local.get(hold.id);
    if (local === undefined) return;
    this.#local.delete(hold.id);
    const slice = this.#slices.get(local.accountId);
    if (slice === undefined) return;
    slice.outstanding -= local.amount;
    slice.amount -= local.amount;
  }

  /** Gives a hold admitted from a slice back to the slice; false for any other hold. */
  release(hold: Hold): boolean {
    const local = this.#local.get(hold.id);
    if (local === undefined) return false;
    this.#local.delete(hold.id);
    const slice = this.#slices.get(local.accountId);
    if (slice !== undefined) slice.outstanding -= local.amount;
    return true;
  }

  /** Answers a recall of the account's slice at once (this process's own admission was refused). */
  giveBackUnused(accountId: string): void {
    const slice = this.#slices.get(accountId);
    if (slice !== undefined && slice.amount > slice.outstanding) void this.#trim(accountId, slice.outstanding);
  }

  /** Stops admitting from slices and gives every slice back (what requests still in flight hold stays until they settle). */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#ticking;
    for (const [accountId, slice] of this.#slices) {
      await slice.busy;
      await this.#trim(accountId, slice.outstanding);
    }
  }

  #slice(accountId: string): Slice {
    let slice = this.#slices.get(accountId);
    if (slice === undefined) {
      slice = { amount: 0n, outstanding: 0n, usableUntil: 0, lastUse: this.now(), want: 0n, busy: null };
      this.#slices.set(accountId, slice);
    }
    return slice;
  }

  #refill(accountId: string, amount: bigint): void {
    const slice = this.#slice(accountId);
    const wanted = amount * this.#sliceRequests;
    slice.want = wanted > this.#maxSlice ? (amount > this.#maxSlice ? amount : this.#maxSlice) : wanted;
    slice.lastUse = this.now();
    if (slice.busy !== null || this.#closed) return;
    const sentAt = this.now();
    slice.busy = this.#escrowOp(accountId, slice.outstanding + slice.want, false, sentAt, amount)
      .then((answer) => {
        slice.amount += BigInt(String(answer.granted ?? "0"));
        slice.usableUntil = sentAt + Math.floor((this.#leaseMs * 2) / 3);
      })
      .catch(() => undefined)
      .finally(() => (slice.busy = null));
  }

  /**
   * Gives the slice back down to `keep`; counted before it is sent. With requests in flight, as the
   * amount beyond them (a settlement of one of them may commit first and take its share out).
   */
  #trim(accountId: string, keep: bigint): Promise<void> {
    const slice = this.#slice(accountId);
    if (slice.busy !== null) return slice.busy;
    const give = slice.amount > keep ? slice.amount - keep : 0n;
    slice.amount -= give;
    slice.busy = this.#escrowOp(accountId, keep, true, this.now(), 0n, keep === 0n ? undefined : give)
      .then(() => undefined)
      .catch(() => undefined)
      .finally(() => {
        slice.busy = null;
        if (keep === 0n && slice.outstanding === 0n && slice.amount === 0n) this.#slices.delete(accountId);
      });
    return slice.busy;
  }

  /** `least`: a refill only when half of what is available covers this (the triggering request's amount). */
  #escrowOp(accountId: string, want: bigint, trim: boolean, now: number, least: bigint, give?: bigint): Promise<PgAnswer> {
    const expires = (now + this.#leaseMs).toString();
    const op = {
      k: "escrow",
      account: accountId,
      holder: this.holder,
      want: want.toString(),
      least: least.toString(),
      now: now.toString(),
      expires,
      trim: trim ? 1 : 0,
      ...(give !== undefined && { give: give.toString() }),
    } as const;
    return this.batcher.call(op, accountId, AFTER_KEYS);
  }

  /** Renews leases running short, answers recalls, gives back idle slices and forgets stale plain words. */
  async #tick(): Promise<void> {
    const now = this.now();
    for (const [pair, until] of this.#plain) if (until < now) this.#plain.delete(pair);
    try {
      const rows = (await this.db.executeQuery(CompiledQuery.raw(`select account_id, amount_nano, expires_at, recall from account_escrows where holder = $1`, [this.holder])))
        .rows as Array<{
        account_id: string;
        expires_at: string | bigint;
        recall: number;
      }>;
      const byAccount = new Map(rows.map((row) => [row.account_id, row]));
      const renew: string[] = [];
      for (const [accountId, slice] of this.#slices) {
        if (slice.busy !== null) continue;
        const row = byAccount.get(accountId);
        // Gone (its lease ran out and the sweeper gave it back): nothing of it is left to admit from.
        if (row === undefined) slice.amount = 0n;
        if (row === undefined && slice.amount === 0n && slice.outstanding === 0n && now - slice.lastUse > this.#idleMs) this.#slices.delete(accountId);
        // A recall, or one answered while a request was in flight that has since been released: what it no longer needs goes back.
        else if (row !== undefined && (row.recall === 1 || (row.recall === 2 && slice.amount > slice.outstanding))) void this.#trim(accountId, slice.outstanding);
        else if (now - slice.lastUse > this.#idleMs && slice.outstanding === 0n) void this.#trim(accountId, 0n);
        else if (row !== undefined && Number(row.expires_at) - now < this.#leaseMs / 2) renew.push(accountId);
      }
      if (renew.length > 0) {
        await this.db.executeQuery(
          // Rows locked in account order, the order gw_batch locks them in: no deadlock with a batch.
          CompiledQuery.raw(RENEW_SQL, [(now + this.#leaseMs).toString(), this.holder, renew]),
        );
        for (const accountId of renew) {
          const slice = this.#slices.get(accountId);
          if (slice !== undefined) slice.usableUntil = now + Math.floor((this.#leaseMs * 2) / 3);
        }
      }
    } catch {
      // The next tick tries again; a slice whose lease is not renewed stops being usable on its own.
    }
  }
}

/** Gives back the slices whose lease ran out (their holder died), one escrow operation each. Returns how many. */
export async function sweepExpiredEscrows(db: Kysely<Database>, batcher: PostgresBatcher, now: number): Promise<number> {
  const expired = await db.selectFrom("account_escrows").select(["account_id", "holder"]).where("expires_at", "<=", BigInt(now)).execute();
  let returned = 0;
  for (const row of expired) {
    const op = {
      k: "escrow",
      account: row.account_id,
      holder: row.holder,
      want: "0",
      now: now.toString(),
      expires: now.toString(),
      trim: 1,
      expired_before: now.toString(),
    } as const;
    const answer = await batcher.call(op, row.account_id, AFTER_KEYS);
    if (answer.granted !== "0") returned += 1;
  }
  return returned;
}
