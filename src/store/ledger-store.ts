// Ledger reads and retention. Rows are appended by settlement (billing) and by administrator
// balance changes; the database refuses updates and deletes of rows younger than 365 days.
import { sql, type Kysely, type RawBuilder, type Selectable } from "kysely";
import { GatewayError } from "../errors/catalogue.js";
import { dbErrorKind, dbErrorMessage } from "./db-errors.js";
import { LEDGER_RETENTION_MS } from "./migrations/0001-initial.js";
import type { Database, LedgerTable } from "./tables.js";

export class LedgerStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Deletes rows older than N days; N below 365 is refused before touching the database. */
  async prune(olderThanDays: number, now = Date.now()): Promise<number> {
    if (!Number.isInteger(olderThanDays) || olderThanDays < 0) {
      throw new GatewayError("invalid_request", "older-than-days must be a whole number of days", { param: "older_than_days" });
    }
    const cutoff = BigInt(now - olderThanDays * 86_400_000);
    if (olderThanDays * 86_400_000 < LEDGER_RETENTION_MS) {
      throw new GatewayError("ledger_retention_violation", "ledger rows are kept 365 days after created_at; use --older-than-days 365 or more");
    }
    return this.deleteWhere(sql<boolean>`created_at < ${cutoff}`);
  }

  /** Deletes one row by id: the route-level delete, refused by the database within 365 days. */
  async deleteRow(id: bigint): Promise<void> {
    const deleted = await this.deleteWhere(sql<boolean>`id = ${id}`);
    if (deleted === 0) throw new GatewayError("not_found", `no ledger row ${id}`);
  }

  private async deleteWhere(condition: RawBuilder<boolean>): Promise<number> {
    try {
      const result = await this.db.deleteFrom("ledger").where(condition).executeTakeFirst();
      return Number(result.numDeletedRows);
    } catch (error) {
      if (dbErrorKind(error) === "trigger" || /ledger_retention_violation/.test(dbErrorMessage(error))) {
        throw new GatewayError("ledger_retention_violation");
      }
      throw error;
    }
  }

  /** The usage row of one request of one account (the unique request_id index finds it); undefined when there is none. */
  async usageRow(accountId: string, requestId: string): Promise<Selectable<LedgerTable> | undefined> {
    return this.db.selectFrom("ledger").selectAll().where("request_id", "=", requestId).where("account_id", "=", accountId).where("kind", "=", "usage").executeTakeFirst();
  }

  async count(accountId?: string): Promise<number> {
    let query = this.db.selectFrom("ledger").select((eb) => eb.fn.countAll<bigint>().as("n"));
    if (accountId) query = query.where("account_id", "=", accountId);
    return Number((await query.executeTakeFirstOrThrow()).n);
  }
}
