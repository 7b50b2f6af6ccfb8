// Stored Responses-API turns for bridged providers: `store` and `previous_response_id` work per
// account, and expire. A stored turn keeps the response object and the Chat history to continue.
import type { Kysely } from "kysely";
import { nowMs } from "../core/ids.js";
import type { Database } from "./tables.js";

export const STORED_RESPONSE_TTL_MS = 30 * 86_400_000;

export class ResponsesStore {
  constructor(private readonly db: Kysely<Database>) {}

  async save(accountId: string, id: string, body: unknown, ttlMs = STORED_RESPONSE_TTL_MS): Promise<void> {
    const now = nowMs();
    await this.db
      .insertInto("stored_responses")
      .values({ id, account_id: accountId, body: JSON.stringify(body), created_at: now, expires_at: now + BigInt(ttlMs) })
      .onConflict((oc) => oc.column("id").doNothing())
      .execute();
  }

  /** The stored body, or null when unknown, expired or another account's. */
  async get(accountId: string, id: string): Promise<unknown> {
    const row = await this.db
      .selectFrom("stored_responses")
      .select("body")
      .where("id", "=", id)
      .where("account_id", "=", accountId)
      .where("expires_at", ">", nowMs())
      .executeTakeFirst();
    return row ? (JSON.parse(row.body) as unknown) : null;
  }

  async deleteExpired(): Promise<number> {
    const result = await this.db.deleteFrom("stored_responses").where("expires_at", "<=", nowMs()).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
