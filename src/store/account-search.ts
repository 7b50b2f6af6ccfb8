// Accounts in creation order, a page at a time after a cursor, optionally filtered by a search text:
// an exact account id, or a part of the email address (case-insensitive). For GET /admin/v1/accounts.
import { sql, type Kysely } from "kysely";
import { toAccount, type Account } from "./accounts-store.js";
import type { Database } from "./tables.js";
import { OPERATOR_ACCOUNT_ID } from "./operator-usage.js";

export interface AccountCursor {
  createdAt: bigint;
  id: string;
}

export async function searchAccounts(db: Kysely<Database>, options: { limit: number; after?: AccountCursor; search?: string }): Promise<Account[]> {
  // The operator's system account (operator-usage.ts) is nobody's to manage.
  let query = db.selectFrom("accounts").selectAll().where("id", "!=", OPERATOR_ACCOUNT_ID);
  const search = options.search?.trim().toLowerCase();
  if (search) {
    const pattern = `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((eb) => eb.or([eb("id", "=", options.search!.trim()), sql<boolean>`email like ${pattern} escape '\\'`]));
  }
  const after = options.after;
  if (after) query = query.where((eb) => eb.or([eb("created_at", ">", after.createdAt), eb.and([eb("created_at", "=", after.createdAt), eb("id", ">", after.id)])]));
  const rows = await query.orderBy("created_at").orderBy("id").limit(options.limit).execute();
  return rows.map(toAccount);
}
