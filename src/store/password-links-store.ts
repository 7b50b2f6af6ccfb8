// Set-password links (migration 0024): an administrator issues one for an account so that its person
// can set a first password ("setup") or a new one ("reset"). The raw token goes into the link once
// and is never stored: only its SHA-256. A link works once, until it expires: use() marks it used
// with a conditional UPDATE (unused, unexpired), so of two concurrent uses exactly one gets the row;
// the caller sets the password in the same transaction. A new link for an account replaces the
// account's earlier ones.
import { createHash, randomBytes } from "node:crypto";
import type { Kysely, Selectable } from "kysely";
import { newId } from "../core/ids.js";
import type { Database, PasswordLinksTable } from "./tables.js";

export type PasswordLinkPurpose = PasswordLinksTable["purpose"];

/** The bounds of server.password_link_ttl_hours, and its default. */
export const PASSWORD_LINK_TTL_HOURS = { min: 1, max: 168, default: 24 } as const;

export interface PasswordLink {
  id: string;
  accountId: string;
  purpose: PasswordLinkPurpose;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

function toPasswordLink(row: Selectable<PasswordLinksTable>): PasswordLink {
  return {
    id: row.id,
    accountId: row.account_id,
    purpose: row.purpose,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    usedAt: row.used_at === null ? null : Number(row.used_at),
  };
}

export class PasswordLinksStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** A new link for the account (its earlier links stop working); the token is returned only here. */
  async issue(input: { accountId: string; purpose: PasswordLinkPurpose; ttlMs: number; now?: number }): Promise<{ link: PasswordLink; token: string }> {
    const now = input.now ?? Date.now();
    const token = randomBytes(32).toString("base64url");
    // The account's earlier links, and every expired one (issuing is rare enough to carry the clean-up).
    await this.db
      .deleteFrom("password_links")
      .where((eb) => eb.or([eb("account_id", "=", input.accountId), eb("expires_at", "<=", BigInt(now))]))
      .execute();
    const row = await this.db
      .insertInto("password_links")
      .values({
        id: newId("pwlink"),
        account_id: input.accountId,
        token_hash: hashToken(token),
        purpose: input.purpose,
        created_at: BigInt(now),
        expires_at: BigInt(now + input.ttlMs),
        used_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { link: toPasswordLink(row), token };
  }

  /** The link a token names while it can still be used (unused, unexpired), without using it; else null. */
  async peek(token: string, now = Date.now()): Promise<PasswordLink | null> {
    const row = await this.db
      .selectFrom("password_links")
      .selectAll()
      .where("token_hash", "=", hashToken(token))
      .where("used_at", "is", null)
      .where("expires_at", ">", BigInt(now))
      .executeTakeFirst();
    return row ? toPasswordLink(row) : null;
  }

  /**
   * Uses the link a token names: one conditional UPDATE marks it used if it is unused and unexpired.
   * Null when the token is unknown, used, expired or replaced. Run it in the transaction that sets
   * the password, so that both happen or neither.
   */
  async use(token: string, now = Date.now()): Promise<PasswordLink | null> {
    const row = await this.db
      .updateTable("password_links")
      .set({ used_at: BigInt(now) })
      .where("token_hash", "=", hashToken(token))
      .where("used_at", "is", null)
      .where("expires_at", ">", BigInt(now))
      .returningAll()
      .executeTakeFirst();
    return row ? toPasswordLink(row) : null;
  }

  /** The account's links, newest first (used ones included until the next link replaces them). */
  async listByAccount(accountId: string): Promise<PasswordLink[]> {
    const rows = await this.db.selectFrom("password_links").selectAll().where("account_id", "=", accountId).orderBy("created_at", "desc").orderBy("id").execute();
    return rows.map(toPasswordLink);
  }
}
