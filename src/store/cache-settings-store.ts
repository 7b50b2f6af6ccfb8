// The response cache's opt-in rows (migration 0035, ADR 0044): one per key or workspace using it.
import type { Kysely } from "kysely";
import type { Database } from "./tables.js";

export type CacheScope = "account" | "gateway";
export type CacheSubjectKind = "key" | "workspace";

export interface CacheSetting {
  ttlSeconds: number;
  scope: CacheScope;
  updatedAt: number;
}

export function cacheSubject(kind: CacheSubjectKind, id: string): string {
  return `${kind}:${id}`;
}

export class CacheSettingsStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** The rows of these subjects that exist, by subject. */
  async read(subjects: readonly string[]): Promise<Map<string, CacheSetting>> {
    const found = new Map<string, CacheSetting>();
    if (subjects.length === 0) return found;
    const rows = await this.db.selectFrom("cache_settings").selectAll().where("subject", "in", subjects).execute();
    for (const row of rows)
      found.set(row.subject, { ttlSeconds: Number(row.ttl_seconds), scope: row.scope === "gateway" ? "gateway" : "account", updatedAt: Number(row.updated_at) });
    return found;
  }

  async write(subject: string, setting: CacheSetting): Promise<void> {
    const values = { ttl_seconds: BigInt(setting.ttlSeconds), scope: setting.scope, updated_at: BigInt(setting.updatedAt) };
    await this.db
      .insertInto("cache_settings")
      .values({ subject, ...values })
      .onConflict((c) => c.column("subject").doUpdateSet(values))
      .execute();
  }

  /** True when a row was there. */
  async remove(subject: string): Promise<boolean> {
    const result = await this.db.deleteFrom("cache_settings").where("subject", "=", subject).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}
