// StoreBilling: the Billing contract over the shared database, correct for several gateway processes
// on one PostgreSQL (row locks and conditional UPDATEs, no in-process state) and for SQLite (one
// writer; each call is one short write transaction that starts with a write, so it never has to
// upgrade a read lock). See admission.ts, settlement.ts and holds.ts for the statements and why.
//
// The per-request operations (admit, settle, release) take the fast path of each database:
// - PostgreSQL: an operation of the PL/pgSQL function gw_batch each (gw-batch-function.ts),
//   group-committed by PostgresBatcher (postgres-batcher.ts): the operations queued while a batch is in
//   flight go as one statement in autocommit, one round trip and one commit for all of them.
// - SQLite: precompiled SQL (no query builder per request) run by SqliteWriter (sqlite-writer.ts), which
//   group-commits the operations of one event-loop turn in one transaction (when one of them fails,
//   the batch is rolled back and each runs again alone).
// Both keep the semantics documented in admission.ts, settlement.ts and holds.ts.
//
// Holds expire after 15 minutes by default (longer than any buffered or streamed response the
// gateway allows); video tasks, which settle when the task completes, pass a longer ttlMs to admit().
// Once startLiveness() has run, a hold of the default lifetime also names this process (holds.holder,
// process-liveness.ts, ADR 0054): when the process dies, the sweeper of another releases it within
// the liveness lease and one sweep, not 15 minutes. A video task's hold names no process: it outlives
// the one that took it. A released hold whose settlement arrives afterwards still charges the full
// cost (see settlement.ts for the over-balance policy).
import type { Kysely } from "kysely";
import type { Nano } from "../core/money.js";
import { withRefusalFigures } from "./refusal-figures.js";
import { totalTokens, usageCount, type Usage } from "../core/usage.js";
import { GatewayError } from "../errors/catalogue.js";
import type { ApiKey } from "../store/keys-store.js";
import type { DatabaseHandle } from "../store/database.js";
import type { Database } from "../store/tables.js";
import { monthOf, newId } from "../core/ids.js";
import { holdOf, type Reservation } from "./admission.js";
import { reservePostgres } from "./admission-postgres.js";
import { forgetDeadProcesses, releaseExpiredHolds as sweepExpiredHolds, releaseHoldPostgres } from "./holds.js";
import { ProcessLiveness, type LivenessOptions } from "./process-liveness.js";
import { setKeyCaps, type KeyCapsChange } from "./key-caps.js";
import { scopesOfColumn } from "./budgets-sqlite.js";
import { DIMENSION_SET, TOKEN_PART_NAMES, TOKEN_PARTS, type DimensionSet } from "../core/dimensions.js";
import { periodStarts } from "./key-period.js";
import { capBreakdown, flatBreakdown, priceBreakdown, projectCost, projectTokens, type PriceBreakdown } from "./pricing.js";
import { AlreadySettled, type SettlementInput } from "./settlement.js";
import { applySettlementPostgres } from "./settlement-postgres.js";
import { LocalSqliteBillingWrites, type SqliteBillingWrites } from "./sqlite-billing-writes.js";
import { PostgresBatcher, type PgAnswer } from "./postgres-batcher.js";
import { PostgresEscrow, sweepExpiredEscrows, type EscrowOptions } from "./escrow-postgres.js";
import type { AdmissionRequest, AdmitOptions, Billing, Charge, Hold } from "./types.js";
import { accountProfile, keyUsage, type AccountProfile, type KeyUsage } from "./usage-queries.js";

export const DEFAULT_HOLD_TTL_MS = 15 * 60_000;

/**
 * The largest amount (nano-USD, about 9 million USD) or token count one admission or settlement may
 * carry: 2^53 - 1, so that the 64-bit columns and the sums the database forms of them (held, spent,
 * monthly totals: 1,024 such values fit) cannot overflow. Checked before an operation joins a batch:
 * an overflow inside the database fails the whole shared PostgreSQL batch, which then reruns item by
 * item. Client input (max tokens, image n, video seconds) and upstream counts (plausibleUsage) are
 * bounded long before, so this stops only bugs and prices configured beyond reason.
 */
export const MAX_BILLABLE = Number.MAX_SAFE_INTEGER;
const MAX_BILLABLE_NANO = BigInt(MAX_BILLABLE);

function billable(nano: Nano, tokens: number): boolean {
  return nano >= 0n && nano <= MAX_BILLABLE_NANO && Number.isSafeInteger(tokens) && tokens >= 0;
}
export const DEFAULT_SWEEP_INTERVAL_MS = 30_000;

export interface StoreBillingOptions {
  /** The clock, epoch ms; tests inject one to cross month boundaries and expire holds. */
  now?: () => number;
  holdTtlMs?: number;
  /** Called with errors of background sweeps (the next sweep retries). */
  onSweepError?: (error: unknown) => void;
  /** Called with the seconds each write batch took (the gateway_db_batch_duration_seconds metric). */
  onBatch?: ((seconds: number) => void) | undefined;
  /**
   * SQLite: where admissions, settlements and releases are committed. Default: this process's own
   * group-commit writer; a cluster worker passes the primary's (sqlite-billing-remote.ts, ADR 0047).
   */
  sqliteWrites?: SqliteBillingWrites;
  /** PostgreSQL: admit from this process's slice of an account's balance where the balance alone decides (escrow-postgres.ts, ADR 0048); absent: off. */
  escrow?: EscrowOptions | undefined;
}

/**
 * How long an admission refused for the balance while other processes' slices were out waits for
 * them to give back what they do not use, admitting again every RECALL_POLL_MS (the holders look
 * every 100 ms): a slice never makes a false refusal.
 */
const RECALL_WAIT_MS = 2_000;
const RECALL_POLL_MS = 25;

// Deadlocks and serialization failures roll everything back and are safe to retry; the lock order
// makes them unexpected, but a retry is cheaper than a 502.
const TRANSIENT_CODES = new Set(["40P01", "40001", "SQLITE_BUSY"]);
const MAX_ATTEMPTS = 3;
/** When to try again to give back the hold of an admission whose outcome is unknown; then the sweeper. */
const ABANDONED_HOLD_RETRY_MS = [250, 1_000, 5_000, 15_000, 60_000];

function isTransient(error: unknown): boolean {
  return typeof error === "object" && error !== null && TRANSIENT_CODES.has(String((error as { code?: unknown }).code));
}

export class StoreBilling implements Billing {
  readonly now: () => number;
  readonly #holdTtlMs: number;
  readonly #onSweepError: (error: unknown) => void;
  #sweepTimer: NodeJS.Timeout | undefined;
  #sweeping: Promise<unknown> | undefined;
  /** The write path of this database: SQLite's billing writes (group commit, here or in the primary) or PostgreSQL's batcher. */
  readonly #path: { dialect: "sqlite"; writes: SqliteBillingWrites } | { dialect: "postgres"; batcher: PostgresBatcher };
  /** The database's dimensions: what admission projects, settlement prices and writes, and reports sum. */
  readonly #dimensions: DimensionSet;
  /** How this process seals the ledger rows it appends (DatabaseHandle.ledgerChain). */
  readonly #chain: DatabaseHandle["ledgerChain"];
  /** PostgreSQL with options.escrow: this process's slices of account balances. */
  readonly #escrow: PostgresEscrow | null = null;
  /** This process's liveness row, once startLiveness() wrote it: the holder its holds name. */
  #liveness: ProcessLiveness | null = null;

  private readonly db: Kysely<Database>;

  /** `database` is the store's handle (src/store/database.ts): its Kysely instance, its dimensions and, on SQLite, the raw connection. */
  constructor(database: Pick<DatabaseHandle, "db" | "dialect" | "sqlite" | "dimensions" | "ledgerChain">, options: StoreBillingOptions = {}) {
    this.db = database.db;
    this.#dimensions = database.dimensions;
    this.#chain = database.ledgerChain;
    this.now = options.now ?? Date.now;
    this.#holdTtlMs = options.holdTtlMs ?? DEFAULT_HOLD_TTL_MS;
    this.#onSweepError = options.onSweepError ?? (() => undefined);
    if (database.dialect === "sqlite") {
      this.#path = { dialect: "sqlite", writes: options.sqliteWrites ?? new LocalSqliteBillingWrites(database, { onBatch: options.onBatch }) };
    } else {
      const batcher = new PostgresBatcher(database.db, options.onBatch);
      this.#path = { dialect: "postgres", batcher };
      if (options.escrow !== undefined) this.#escrow = new PostgresEscrow(batcher, database.db, this.now, options.escrow);
    }
  }

  /** Checks every limit and reserves the projected cost and tokens; see admission.ts for the order. */
  async admit(request: AdmissionRequest, options: AdmitOptions = {}): Promise<Hold> {
    const amount = projectCost(request, this.#dimensions);
    const tokens = projectTokens(request);
    if (!billable(amount, tokens)) {
      throw new GatewayError("invalid_request", "The request's projected cost or tokens exceed what one request may reserve; ask for less output or send a shorter prompt.", {
        code: "projection_out_of_range",
      });
    }
    const ttlMs = options.ttlMs ?? this.#holdTtlMs;
    const now = this.now();
    // A hold with a lifetime of its own (a video task) outlives this process: it names no holder.
    const holder = options.ttlMs === undefined ? (this.#liveness?.holder ?? null) : null;
    const reservation: Reservation = { request, holdId: newId("hold"), amount, tokens, now, ttlMs, holder, month: monthOf(now), periods: periodStarts(now) };
    const path = this.#path;
    try {
      if (path.dialect === "postgres") return await this.#admitPostgres(path.batcher, reservation, options.ttlMs !== undefined);
      const answer = await this.#withRetry(() => path.writes.reserve(reservation));
      if ("refusal" in answer) throw answer.refusal;
      return holdOf(reservation, answer.status);
    } catch (error) {
      if (!(error instanceof GatewayError)) {
        // The database failed to answer, not refused: the reservation may have committed all the
        // same (a connection lost after COMMIT), and nobody would give that hold back before its
        // expiry. Releasing a hold that was never written changes nothing.
        this.#releaseAbandoned(request.accountId, reservation.holdId);
        throw error;
      }
      throw await withRefusalFigures(this.db, error, { accountId: request.accountId, keyId: request.keyId, month: reservation.month, amount, tokens });
    }
  }

  /** Prices the usage and records it; see settlement.ts. Idempotent by the hold's request id. */
  async settle(hold: Hold, usage: Usage, provider: string, flatCost?: Nano): Promise<Charge> {
    let breakdown: PriceBreakdown;
    let normalized: Usage;
    try {
      normalized = normalizeUsage(usage, this.#dimensions);
      // A clamped request is charged at most its hold (docs/billing.md, "Clamping"); the tokens stay as reported.
      breakdown = flatCost === undefined ? priceBreakdown(hold.model, normalized, hold.imageVariant, this.#dimensions) : flatBreakdown(flatCost, this.#dimensions);
      if (hold.chargeCap !== undefined) breakdown = capBreakdown(breakdown, hold.chargeCap, this.#dimensions);
      const saving = breakdown.cacheSaving < 0n ? -breakdown.cacheSaving : breakdown.cacheSaving;
      if (!billable(breakdown.cost, totalTokens(normalized)) || saving > MAX_BILLABLE_NANO) {
        throw new RangeError(`settlement of ${hold.requestId} out of range: cost ${breakdown.cost} nano`);
      }
    } catch (error) {
      throw ledgerWriteFailed(error);
    }
    const cost = breakdown.cost;
    const input: SettlementInput = { hold, usage: normalized, provider, cost, breakdown, now: this.now(), dimensions: this.#dimensions, chain: this.#chain };
    const path = this.#path;
    try {
      if (path.dialect === "postgres") {
        const escrow = this.#escrow;
        const observe = escrow === null ? undefined : (answer: PgAnswer) => escrow.noteAnswer(hold.accountId, hold.keyId, answer, 0n);
        try {
          await this.#withRetry(() => applySettlementPostgres(path.batcher, input, escrow?.settleFields(hold), observe));
        } finally {
          escrow?.settled(hold);
        }
      } else {
        const replay = await this.#withRetry(() => path.writes.settle(input));
        if (replay) throw replay;
      }
      return { cost, recorded: true };
    } catch (error) {
      if (error instanceof AlreadySettled) return { cost: error.recordedCost ?? (await this.#recordedCost(hold.requestId, cost)), recorded: false };
      throw ledgerWriteFailed(error);
    }
  }

  /** Gives a hold back; releasing twice, or after settlement, changes nothing. */
  async release(hold: Hold): Promise<void> {
    if (this.#escrow?.release(hold) === true) return;
    await this.#withRetry(() => this.#releaseOne(hold.accountId, hold.id, undefined, hold.budgets));
  }

  /** Releases holds past their expiry or left by a process whose liveness ran out (a crashed one). Returns how many. */
  async releaseExpiredHolds(now: number = this.now()): Promise<number> {
    // This process is alive whatever its row says (a renewal late behind a stall, a test's clock jump): never its own holds.
    await this.#liveness?.renew(Math.max(now, this.now()));
    const released = await sweepExpiredHolds(this.db, now, (due, sweptAt) => this.#releaseOne(due.account_id, due.id, sweptAt, scopesOfColumn(due.budgets)));
    await forgetDeadProcesses(this.db, now);
    // And the balance slices of processes that died (their leases ran out), whichever process held them.
    if (this.#path.dialect === "postgres") await sweepExpiredEscrows(this.db, this.#path.batcher, now);
    return released;
  }

  /** Sweeps expired holds every intervalMs until stopSweeper(); the timer does not keep Node alive. */
  startSweeper(intervalMs: number = DEFAULT_SWEEP_INTERVAL_MS): void {
    if (this.#sweepTimer) return;
    this.#sweepTimer = setInterval(() => {
      if (this.#sweeping) return; // a slow sweep is never overlapped by the next one
      this.#sweeping = this.releaseExpiredHolds()
        .catch((error: unknown) => this.#onSweepError(error))
        .finally(() => (this.#sweeping = undefined));
    }, intervalMs);
    this.#sweepTimer.unref();
  }

  /** Stops the timer and waits for a sweep in progress, so the database can be closed afterwards. */
  async stopSweeper(): Promise<void> {
    clearInterval(this.#sweepTimer);
    this.#sweepTimer = undefined;
    await this.#sweeping;
  }

  /**
   * Writes this process's liveness row and renews it until close(); from then on its holds name it, so
   * that they are released soon after it dies (process-liveness.ts). Called once, before serving.
   */
  async startLiveness(options: LivenessOptions = {}): Promise<void> {
    if (this.#liveness !== null) return;
    const liveness = new ProcessLiveness(this.db, this.now, { onError: this.#onSweepError, ...options });
    await liveness.start();
    this.#liveness = liveness;
  }

  /** The holder id this process's holds carry; null before startLiveness(). */
  get holder(): string | null {
    return this.#liveness?.holder ?? null;
  }

  /**
   * Stops the sweeper, gives this process's balance slices back, then releases the holds that still
   * name it (a settlement retry that had not succeeded) and only then removes its liveness row
   * (shutdown, after the last request). What fails is left to the row's expiry and another sweeper.
   */
  async close(): Promise<void> {
    await this.stopSweeper();
    await this.#escrow?.close();
    const liveness = this.#liveness;
    if (liveness === null) return;
    this.#liveness = null;
    await liveness.stop();
    try {
      const own = await this.db.selectFrom("holds").select(["id", "account_id", "budgets"]).where("holder", "=", liveness.holder).execute();
      for (const hold of own) await this.#withRetry(() => this.#releaseOne(hold.account_id, hold.id, undefined, scopesOfColumn(hold.budgets)));
      await liveness.remove();
    } catch (error) {
      this.#onSweepError(error);
    }
  }

  /** Changes a key's caps (recorded in key_allocations) and re-judges exhaustion; see key-caps.ts. */
  setKeyCaps(keyId: string, caps: KeyCapsChange, actorAccountId: string | null): Promise<ApiKey> {
    return setKeyCaps(this.db, keyId, caps, actorAccountId, this.now());
  }

  /** GET /v1/me: balance, held amount, monthly budget and its use this UTC month. */
  accountProfile(accountId: string): Promise<AccountProfile> {
    return accountProfile(this.db, accountId, this.now());
  }

  /** GET /v1/usage: totals, by model and by UTC day, over [start, end) (default: the 30 days up to now). */
  keyUsage(keyId: string, range: { start?: number; end?: number } = {}): Promise<KeyUsage> {
    return keyUsage(this.db, keyId, range, this.now(), this.#dimensions);
  }

  /** Admission on PostgreSQL: from this process's slice when it can, else gw_batch, waiting out a recall (RECALL_WAIT_MS). */
  async #admitPostgres(batcher: PostgresBatcher, r: Reservation, ownLifetime: boolean): Promise<Hold> {
    const escrow = this.#escrow;
    if (escrow === null) return this.#withRetry(() => reservePostgres(batcher, r));
    const local = escrow.admit(r, ownLifetime);
    if (local !== null) return local;
    const deadline = performance.now() + RECALL_WAIT_MS;
    const { accountId, keyId } = r.request;
    for (;;) {
      let recalled = 0;
      const observe = (answer: PgAnswer) => {
        recalled = Number(answer.recalled ?? 0);
        escrow.noteAnswer(accountId, keyId, answer, r.amount);
      };
      try {
        return await this.#withRetry(() => reservePostgres(batcher, r, observe));
      } catch (error) {
        const forBalance = error instanceof GatewayError && error.details.code === "insufficient_balance";
        if (!forBalance || recalled === 0 || performance.now() > deadline) throw error;
      }
      escrow.giveBackUnused(accountId);
      await new Promise((resolve) => setTimeout(resolve, RECALL_POLL_MS));
    }
  }

  /** `sweptAt`: the sweeper's release, only of a hold expired by then or left by a dead holder (holds.ts). */
  #releaseOne(accountId: string, holdId: string, sweptAt?: number, budgets?: readonly string[]): Promise<boolean> {
    const path = this.#path;
    if (path.dialect === "postgres") return releaseHoldPostgres(path.batcher, accountId, holdId, sweptAt, budgets);
    return path.writes.release(holdId, sweptAt);
  }

  #releaseAbandoned(accountId: string, holdId: string, attempt = 0): void {
    const delay = ABANDONED_HOLD_RETRY_MS[attempt];
    if (delay === undefined) return; // the sweeper ends it at its expiry
    setTimeout(() => {
      this.#releaseOne(accountId, holdId).catch(() => this.#releaseAbandoned(accountId, holdId, attempt + 1));
    }, delay).unref();
  }

  async #recordedCost(requestId: string, fallback: Nano): Promise<Nano> {
    const row = await this.db.selectFrom("ledger").select("cost_nano").where("request_id", "=", requestId).executeTakeFirst();
    return row?.cost_nano ?? fallback;
  }

  async #withRetry<T>(run: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await run();
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS || !isTransient(error)) throw error;
      }
    }
  }
}

function ledgerWriteFailed(cause: unknown): GatewayError {
  const error = new GatewayError("ledger_write_failed");
  error.cause = cause;
  return error;
}

/**
 * Whole, non-negative counts with the parts inside their totals: an estimate's fractions round up
 * (never under-bill), each token part's dimensions are capped within its total in list order (for the
 * input: cached reads, then 5-minute and 1-hour cache writes; dimensions.ts), reasoning at the output.
 */
export function normalizeUsage(usage: Usage, dimensions: DimensionSet = DIMENSION_SET): Usage {
  const whole = (value: number | undefined, field: string): number => {
    if (value === undefined) return 0;
    if (!Number.isFinite(value) || value < 0 || value > MAX_BILLABLE) throw new RangeError(`usage.${field} must be a number from 0 to ${MAX_BILLABLE}, got ${value}`);
    return Math.ceil(value);
  };
  const inputTokens = whole(usage.inputTokens, "inputTokens");
  const outputTokens = whole(usage.outputTokens, "outputTokens");
  const normalized: Usage = {
    inputTokens,
    cachedInputTokens: 0,
    outputTokens,
    reasoningTokens: Math.min(whole(usage.reasoningTokens, "reasoningTokens"), outputTokens),
    estimated: usage.estimated,
  };
  // Usage's own fields plus any a dimension list injected in tests names: written by name.
  const counts = normalized as object as Record<string, number>;
  for (const field of dimensions.usageFields) {
    if (field === TOKEN_PARTS.input.usageField || field === TOKEN_PARTS.output.usageField) continue;
    const value = usageCount(usage, field);
    if (value !== undefined) counts[field] = whole(value, field);
  }
  for (const part of TOKEN_PART_NAMES) {
    let left = counts[TOKEN_PARTS[part].usageField]!;
    for (const d of dimensions.parts[part].shares) {
      const value = counts[d.usageField!];
      if (value === undefined) continue;
      counts[d.usageField!] = Math.min(value, left);
      left -= counts[d.usageField!]!;
    }
  }
  return normalized;
}
