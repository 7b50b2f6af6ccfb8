// The cluster primary as the one writer of the billing on SQLite (ADR 0047): it keeps the database
// open after the start, and the workers send it their admissions, settlements and releases
// (src/billing/sqlite-billing-remote.ts); it commits them in group transactions across all workers
// (SqliteWriter) and answers each worker after COMMIT. The workers go on reading the database
// themselves (WAL readers do not wait for the writer) and write everything else (request log, admin,
// sessions) through their own connections, as several processes always could.
import type { Worker } from "node:cluster";
import { answerBillingWrite, LocalSqliteBillingWrites, type BillingWriteRequest } from "../billing/sqlite-billing-writes.js";
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

  constructor(store: Store, io: CliIo) {
    this.#writes = new LocalSqliteBillingWrites(store.handle);
    this.#io = io;
  }

  /** Runs a worker's request and answers it; a worker gone meanwhile gets nothing (its calls died with it). */
  onRequest(worker: Worker, request: BillingWriteRequest): void {
    void answerBillingWrite(this.#writes, request).then((answer) => {
      if (!worker.isConnected()) return;
      try {
        worker.send(answer);
      } catch (error) {
        this.#io.stderr(`worker ${worker.id}: billing answer not delivered: ${(error as Error).message}\n`);
      }
    });
  }
}
