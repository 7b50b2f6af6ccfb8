// JSON of the admin API: the dashboard's views (money as decimal strings, times as ISO 8601) with the
// fields only administrators set, and opaque paging cursors.
import { formatUsd } from "../core/money.js";
import { accountView, iso } from "./account-views.js";
import { GatewayError } from "../errors/catalogue.js";
import type { Account } from "../store/accounts-store.js";
import type { AuditEntry } from "../store/audit-store.js";
import type { UpstreamKeyInfo } from "../store/upstream-keys-store.js";
import { redemptionCodeState, type RedemptionCode } from "../store/redemption-codes-store.js";

export function adminAccountView(a: Account) {
  return {
    ...accountView(a),
    held_usd: formatUsd(a.held),
    monthly_budget_usd: a.monthlyBudget === null ? null : formatUsd(a.monthlyBudget),
    monthly_token_budget: a.monthlyTokenBudget,
    default_model: a.defaultModel,
    /** Whether the account's person can sign in to the dashboard: false until a set-password link is used. */
    password_set: a.hasPassword,
  };
}

export function providerKeyView(k: UpstreamKeyInfo) {
  return { id: k.id, account_id: k.accountId, provider: k.provider, label: k.label, last4: k.last4, created_at: iso(k.createdAt) };
}

/** A redemption code as lists show it; `now` judges expiry. The code's text is never part of it. */
export function codeView(c: RedemptionCode, now = Date.now()) {
  return {
    id: c.id,
    prefix: c.prefix,
    value_usd: formatUsd(c.value),
    batch: c.batch,
    note: c.note,
    state: redemptionCodeState(c, now),
    created_by: c.createdBy,
    created_at: iso(c.createdAt),
    expires_at: iso(c.expiresAt),
    used_at: iso(c.usedAt),
    used_by: c.usedBy,
    revoked_at: iso(c.revokedAt),
  };
}

export function auditView(e: AuditEntry) {
  return {
    id: e.id,
    created_at: iso(e.createdAt),
    actor: e.actor,
    action: e.action,
    target: { type: e.targetType, id: e.targetId },
    before: e.before,
    after: e.after,
    client_address: e.clientAddress,
    request_id: e.requestId,
  };
}

export function encodeCursor(parts: readonly string[]): string {
  return Buffer.from(JSON.stringify(parts)).toString("base64url");
}

/** The parts of a cursor this API handed out; 400 for anything else. */
export function decodeCursor(cursor: string, count: number): string[] {
  try {
    const parts: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(parts) && parts.length === count && parts.every((p) => typeof p === "string" && p.length <= 200)) return parts as string[];
  } catch {
    // falls through to the refusal
  }
  throw new GatewayError("invalid_request", "cursor is not a cursor this API returned", { param: "cursor" });
}
