// Dashboard sessions: server-side rows keyed by the SHA-256 of the cookie value, so a copy of the
// database does not hand out live sessions. Each session carries its own CSRF token.
import { createHash, randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import { nowMs } from "../core/ids.js";
import { toAccount, type Account } from "./accounts-store.js";
import type { Database } from "./tables.js";

/** Absolute lifetime of a session; signing in again starts a new one. */
export const SESSION_TTL_MS = 7 * 24 * 60 * 60_000;

export interface Session {
  /** The SHA-256 of the cookie value (the row id). */
  id: string;
  accountId: string;
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
}

export interface SessionWithAccount {
  session: Session;
  account: Account;
}

function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export class SessionsStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Starts a session; the returned token goes into the cookie and is never stored in clear. */
  async create(accountId: string, ttlMs = SESSION_TTL_MS): Promise<{ token: string; session: Session }> {
    const token = randomBytes(32).toString("base64url");
    const now = nowMs();
    const session: Session = {
      id: hashToken(token),
      accountId,
      csrfToken: randomBytes(32).toString("base64url"),
      createdAt: Number(now),
      expiresAt: Number(now) + ttlMs,
    };
    await this.db
      .insertInto("sessions")
      .values({ id: session.id, account_id: accountId, csrf_token: session.csrfToken, created_at: now, expires_at: BigInt(session.expiresAt) })
      .execute();
    // Sign-ins are rare enough to carry the clean-up of expired rows.
    await this.db.deleteFrom("sessions").where("expires_at", "<=", now).execute();
    return { token, session };
  }

  /** The live session for a cookie value with its account, or null when unknown or expired. */
  async find(token: string, now = Date.now()): Promise<SessionWithAccount | null> {
    const row = await this.db
      .selectFrom("sessions")
      .innerJoin("accounts", "accounts.id", "sessions.account_id")
      .selectAll("accounts")
      .select(["sessions.id as session_id", "sessions.csrf_token", "sessions.created_at as session_created_at", "sessions.expires_at"])
      .where("sessions.id", "=", hashToken(token))
      .executeTakeFirst();
    if (!row || Number(row.expires_at) <= now) return null;
    const { session_id, csrf_token, session_created_at, expires_at, ...account } = row;
    return {
      session: { id: session_id, accountId: account.id, csrfToken: csrf_token, createdAt: Number(session_created_at), expiresAt: Number(expires_at) },
      account: toAccount(account),
    };
  }

  async delete(sessionId: string): Promise<void> {
    await this.db.deleteFrom("sessions").where("id", "=", sessionId).execute();
  }

  /** Ends every session of the account (a password change); answers how many there were. */
  async deleteByAccount(accountId: string): Promise<number> {
    const result = await this.db.deleteFrom("sessions").where("account_id", "=", accountId).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async countByAccount(accountId: string): Promise<number> {
    const row = await this.db
      .selectFrom("sessions")
      .select((eb) => eb.fn.countAll<bigint>().as("n"))
      .where("account_id", "=", accountId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
