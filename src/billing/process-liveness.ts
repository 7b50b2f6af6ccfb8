// A gateway process's liveness (gateway_processes, migration 0040; ADR 0054, docs/billing.md "Holds").
// Each serving process has a holder id of its own, new at every start, and keeps a row with it
// renewed every LIVENESS_RENEW_MS until LIVENESS_TTL_MS ahead. The holds it takes carry the id
// (holds.holder); the sweeper of every process releases the holds whose holder's row has run out or is
// gone (holds.ts), so the holds of a process killed mid-request come back within the lease and one
// sweep interval, not after their 15-minute expiry. A process that was only cut off from the database
// and settles afterwards is charged once, as after a hold's expiry (settlement.ts).
//
// The row is written before the first hold names it (start) and removed at a graceful stop only after
// this process's holds are settled or released (StoreBilling.close).
import type { Kysely } from "kysely";
import { newId } from "../core/ids.js";
import type { Database } from "../store/tables.js";
import { transact } from "../store/transact.js";

/**
 * How long a row stays alive after its last renewal. Three renewals may fail or be late (a stalled
 * event loop, a slow database) before the holds go; with the sweep's 30 s, a dead process's holds
 * are back within a minute. A live process declared dead by mistake loses nothing but its holds'
 * protection: its settlements still charge once.
 */
export const LIVENESS_TTL_MS = 30_000;
/** How often a process renews its row. */
export const LIVENESS_RENEW_MS = 10_000;

export interface LivenessOptions {
  /** How long the row stays alive after a renewal, ms (default LIVENESS_TTL_MS). */
  ttlMs?: number;
  /** How often it is renewed, ms (default a third of ttlMs). */
  renewMs?: number;
  /** Called with the errors of renewals (the next one tries again). */
  onError?: (error: unknown) => void;
}

export class ProcessLiveness {
  /** This process's name on its holds and its row; a restarted process never takes over a dead one's. */
  readonly holder = newId("proc");
  readonly #ttlMs: number;
  readonly #renewMs: number;
  readonly #onError: (error: unknown) => void;
  #timer: NodeJS.Timeout | undefined;
  #renewing: Promise<void> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number,
    options: LivenessOptions = {},
  ) {
    this.#ttlMs = options.ttlMs ?? LIVENESS_TTL_MS;
    this.#renewMs = options.renewMs ?? Math.max(1, Math.floor(this.#ttlMs / 3));
    this.#onError = options.onError ?? (() => undefined);
  }

  /** Writes the row (before a hold names it) and renews it until stop(); the timer does not keep Node alive. */
  async start(): Promise<void> {
    await this.renew();
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      if (this.#renewing) return;
      this.#renewing = this.renew()
        .catch((error: unknown) => this.#onError(error))
        .finally(() => (this.#renewing = undefined));
    }, this.#renewMs);
    this.#timer.unref();
  }

  /** Moves the row's expiry to `now` + the lease; writes it again if a sweeper forgot it (this process was taken for dead). */
  async renew(now: number = this.now()): Promise<void> {
    const expiresAt = BigInt(now + this.#ttlMs);
    // transact: SQLite can refuse the write lock at once while other processes write (workers starting together).
    await transact(this.db, (trx) =>
      trx
        .insertInto("gateway_processes")
        .values({ holder: this.holder, started_at: BigInt(now), expires_at: expiresAt })
        .onConflict((oc) => oc.column("holder").doUpdateSet({ expires_at: expiresAt }))
        .execute(),
    );
  }

  /** Stops renewing (the row then runs out by itself) and waits for a renewal in flight. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#renewing;
  }

  /** Removes the row: only once no hold names this process. */
  async remove(): Promise<void> {
    await transact(this.db, (trx) => trx.deleteFrom("gateway_processes").where("holder", "=", this.holder).execute());
  }
}
