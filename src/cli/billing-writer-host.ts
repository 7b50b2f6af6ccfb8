// The cluster primary as the one writer of the billing on SQLite (ADR 0047): it keeps the database
// open after the start, and the workers send it their admissions, settlements and releases
// (src/billing/sqlite-billing-remote.ts); it commits them in group transactions across all workers
// (SqliteWriter) and answers each worker after COMMIT. The workers go on reading the database
// themselves (WAL readers do not wait for the writer) and write everything else (request log, admin,
// sessions) through their own connections, as several processes always could.
import type { Worker } from "node:cluster";
import { BillingWriteAnswerer, LocalSqliteBillingWrites, type BillingWriteBatch } from "../billing/sqlite-billing-writes.js";
import type { Store } from "../store/index.js";
import type { CliIo } from "./io.js";

/** Tells a forked worker to send its billing writes to the primary ("primary") instead of writing them itself. */
export const BILLING_WRITER_VARIABLE = "GATEWAY_BILLING_WRITER";

/**
 * Whether the primary owns the billing writes: on SQLite with GATEWAY_SQLITE_SHARED_WRITER=1. Opt-in:
 * on the 2-core machine measured the IPC round trip cost more CPU than the lock contention it saves at
 * 1 and 2 workers (decision 0047); otherwise each worker commits its own, as before.
 */
export function primaryWritesBilling(store: Store, env: NodeJS.ProcessEnv): boolean {
  return store.handle.dialect === "sqlite" && env.GATEWAY_SQLITE_SHARED_WRITER === "1";
}

export class BillingWriterHost {
  readonly #writes: LocalSqliteBillingWrites;
  readonly #io: CliIo;
  /** One per worker: its answers of a turn go out in one message. */
  readonly #answerers = new WeakMap<Worker, BillingWriteAnswerer>();

  constructor(store: Store, io: CliIo) {
    this.#writes = new LocalSqliteBillingWrites(store.handle);
    this.#io = io;
  }

  /** Runs a worker's requests and answers them; a worker gone meanwhile gets nothing (its calls died with it). */
  onRequests(worker: Worker, batch: BillingWriteBatch): void {
    let answerer = this.#answerers.get(worker);
    if (answerer === undefined) {
      answerer = new BillingWriteAnswerer(this.#writes, (answers) => {
        if (!worker.isConnected()) return;
        try {
          worker.send(answers);
        } catch (error) {
          this.#io.stderr(`worker ${worker.id}: billing answers not delivered: ${(error as Error).message}\n`);
        }
      });
      this.#answerers.set(worker, answerer);
    }
    answerer.onRequests(batch);
  }
}
