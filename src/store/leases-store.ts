// Named leases with an expiry (gateway_leases, migration 0027): work that exactly one process of the
// whole gateway must do (the active health probes) is done by the process holding the lease. A
// holder renews it well before it expires; when the holder stops or dies, another process takes it
// once it has expired. Taking is one conditional UPDATE, atomic on SQLite and PostgreSQL alike (on
// PostgreSQL a second writer waits for the first's row lock and then finds the row no longer free).
import type { Kysely } from "kysely";
import type { Database } from "./tables.js";

export class LeasesStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Takes or renews lease `name` for `holder` until `until` when it is free, expired or already the holder's. */
  async acquire(name: string, holder: string, now: number, until: number): Promise<boolean> {
    const result = await this.db
      .updateTable("gateway_leases")
      .set({ holder, expires_at: BigInt(until) })
      .where("name", "=", name)
      .where((eb) => eb.or([eb("holder", "=", holder), eb("expires_at", "<=", BigInt(now))]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Gives the lease up at once (a process stopping), so another takes it without waiting for it to expire. */
  async release(name: string, holder: string): Promise<void> {
    await this.db.updateTable("gateway_leases").set({ expires_at: 0n }).where("name", "=", name).where("holder", "=", holder).execute();
  }

  async holder(name: string): Promise<{ holder: string; expiresAt: number } | null> {
    const row = await this.db.selectFrom("gateway_leases").select(["holder", "expires_at"]).where("name", "=", name).executeTakeFirst();
    return row ? { holder: row.holder, expiresAt: Number(row.expires_at) } : null;
  }
}
