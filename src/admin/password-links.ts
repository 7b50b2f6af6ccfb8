// People who sign in (docs/dashboard.md, "People who sign in"): an administrator creates a person (an
// account with no password) or resets one's password by issuing a set-password link; the person opens
// it and chooses a password; a signed-in person changes their own. Each is an audited change shared
// by the admin API, the dashboard and the CLI. Every password change (through a link or by the person)
// ends every session of the account in the same transaction. Secrets never reach the audit log: a
// link appears by its id, purpose and expiry, a password not at all.
import type { FastifyRequest } from "fastify";
import { GatewayError } from "../errors/catalogue.js";
import type { Account, NewAccount } from "../store/accounts-store.js";
import type { AuditedTransaction } from "../store/index.js";
import type { PasswordLink } from "../store/password-links-store.js";
import { iso } from "./account-views.js";
import { createAccount } from "./operations.js";

/** The dashboard page a set-password link opens; the token follows in the fragment (#), which never reaches a server log. */
export const SET_PASSWORD_PATH = "/dashboard/set-password";

export interface IssuedPasswordLink {
  link: PasswordLink;
  /** The link's raw token: in the answer (or the CLI's output) once, never stored. */
  token: string;
}

/** The link to hand over: the gateway's address (server.public_url, else the one the request reached), the page, the token. */
export function passwordLinkUrl(base: string, token: string): string {
  return `${base.replace(/\/+$/, "")}${SET_PASSWORD_PATH}#${token}`;
}

/** The gateway's address as a client of this request reached it: server.public_url when set. */
export function requestBaseUrl(request: FastifyRequest): string {
  return request.snapshot.config.publicUrl ?? `${request.protocol}://${request.host}`;
}

/** A link as the admin API, the dashboard and the CLI show it: once, with its URL. */
export function passwordLinkView(issued: IssuedPasswordLink, base: string) {
  return {
    object: "password_link" as const,
    id: issued.link.id,
    account_id: issued.link.accountId,
    purpose: issued.link.purpose,
    url: passwordLinkUrl(base, issued.token),
    expires_at: iso(issued.link.expiresAt),
  };
}

/**
 * A set-password link for an existing account: "setup" when it has no password yet, "reset" when it
 * has one (which keeps working until the link is used). Earlier links of the account stop working.
 */
export async function issuePasswordLink(tx: AuditedTransaction, accountId: string, ttlMs: number): Promise<IssuedPasswordLink> {
  const account = await tx.accounts.get(accountId);
  if (!account) throw new GatewayError("not_found", `No account ${accountId}.`);
  const issued = await tx.passwordLinks.issue({ accountId, purpose: account.hasPassword ? "reset" : "setup", ttlMs });
  await tx.record({
    action: "account.password_link",
    targetType: "account",
    targetId: accountId,
    before: null,
    after: { link_id: issued.link.id, purpose: issued.link.purpose, expires_at: iso(issued.link.expiresAt) },
  });
  return issued;
}

/** A new person: an account without a password and its set-password link, in one transaction. */
export async function createPerson(tx: AuditedTransaction, input: NewAccount, ttlMs: number): Promise<{ account: Account; issued: IssuedPasswordLink }> {
  const account = await createAccount(tx, { ...input, passwordHash: null });
  return { account, issued: await issuePasswordLink(tx, account.id, ttlMs) };
}

/**
 * Uses a set-password link: marks it used (once; 410 password_link_invalid when it is unknown, used,
 * expired or replaced), sets the password and ends every session of the account.
 */
export async function setPasswordWithLink(tx: AuditedTransaction, token: string, passwordHash: string): Promise<{ link: PasswordLink; sessionsEnded: number }> {
  const link = await tx.passwordLinks.use(token);
  if (!link) throw new GatewayError("password_link_invalid");
  await tx.accounts.setPasswordHash(link.accountId, passwordHash);
  const sessionsEnded = await tx.sessions.deleteByAccount(link.accountId);
  await tx.record({
    action: "account.password_set",
    targetType: "account",
    targetId: link.accountId,
    before: null,
    after: { link_id: link.id, purpose: link.purpose, sessions_ended: sessionsEnded },
  });
  return { link, sessionsEnded };
}

/** A signed-in person's new password (the caller checked the current one); every session of the account ends. */
export async function changePassword(tx: AuditedTransaction, accountId: string, passwordHash: string): Promise<{ sessionsEnded: number }> {
  await tx.accounts.setPasswordHash(accountId, passwordHash);
  const sessionsEnded = await tx.sessions.deleteByAccount(accountId);
  await tx.record({ action: "account.password_change", targetType: "account", targetId: accountId, before: null, after: { sessions_ended: sessionsEnded } });
  return { sessionsEnded };
}
