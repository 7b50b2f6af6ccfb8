// Attempts counted for every process sharing the database (migration 0022): the sign-in and
// redemption throttles. Taking an attempt is one transaction that counts and records it, so that
// parallel attempts on several workers cannot all pass a limit they would pass one at a time: on
// SQLite its first statement writes, which serialises it behind the one write lock; on PostgreSQL it
// first takes a transaction-scoped advisory lock per subject.
import { sql, type Kysely } from "kysely";
import { newId } from "../core/ids.js";
import type { Dialect } from "./dialect.js";
import type { Database } from "./tables.js";
import { transact } from "./transact.js";

export interface AttemptLimit {
  subject: string;
  /** Attempts allowed within the window. */
  limit: number;
}

export interface AttemptTaken {
  /** Seconds until an attempt is allowed; 0 when this one was taken. */
  wait: number;
  /** The rows recorded for this attempt (none when refused). */
  ids: string[];
}

export class AttemptsStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /** Records one attempt for every subject, unless one of them has reached its limit within the window. */
  async take(limits: readonly AttemptLimit[], windowMs: number, now: number): Promise<AttemptTaken> {
    const since = BigInt(now - windowMs);
    return transact(this.db, async (trx) => {
      if (this.dialect === "postgres") {
        for (const { subject } of [...limits].sort((a, b) => (a.subject < b.subject ? -1 : 1))) {
          await sql`select pg_advisory_xact_lock(hashtextextended(${subject}, 0))`.execute(trx);
        }
      }
      // Expired attempts of every subject go; on SQLite this write also takes the write lock first.
      await trx.deleteFrom("attempts").where("at", "<=", since).execute();
      let wait = 0;
      for (const { subject, limit } of limits) {
        const recent = await trx.selectFrom("attempts").select("at").where("subject", "=", subject).where("at", ">", since).orderBy("at", "desc").limit(limit).execute();
        if (recent.length >= limit) wait = Math.max(wait, Math.max(1, Math.ceil((Number(recent[limit - 1]!.at) + windowMs - now) / 1000)));
      }
      if (wait > 0) return { wait, ids: [] };
      const rows = limits.map(({ subject }) => ({ id: newId("att"), subject, at: BigInt(now) }));
      await trx.insertInto("attempts").values(rows).execute();
      return { wait: 0, ids: rows.map((row) => row.id) };
    });
  }

  /** After a success: the attempt no longer counts, nor do the subject's earlier ones (`clear`). */
  async release(ids: readonly string[], clear: readonly string[]): Promise<void> {
    await transact(this.db, async (trx) => {
      if (ids.length > 0)
        await trx
          .deleteFrom("attempts")
          .where("id", "in", [...ids])
          .execute();
      if (clear.length > 0)
        await trx
          .deleteFrom("attempts")
          .where("subject", "in", [...clear])
          .execute();
    });
  }
}
