// JSON views of stored records for the dashboard API: money as decimal strings, times as ISO.
import { effectiveStatus, keyPolicyJson } from "../accounts/key-policy.js";
import { subjectLimitsJson } from "../core/traffic-limits.js";
import { formatUsd } from "../core/money.js";
import type { Account } from "../store/accounts-store.js";
import type { ApiKey } from "../store/keys-store.js";
import type { Invite } from "../store/workspaces-store.js";

export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

export function accountView(account: Account) {
  return {
    id: account.id,
    email: account.email,
    status: account.status,
    is_admin: account.isAdmin,
    tier: account.tier,
    balance_usd: formatUsd(account.balance),
    total_spent_usd: formatUsd(account.totalSpent),
    clamp_output: account.clampOutput,
    limits: subjectLimitsJson(account.limits),
    created_at: iso(account.createdAt),
  };
}

/** A key's identity, state and spending, as every JSON view of a key (the APIs', the CLI's) begins. */
export function keyFacts(key: ApiKey, now: number) {
  return {
    id: key.id,
    account_id: key.accountId,
    workspace_id: key.workspaceId,
    name: key.name,
    prefix: key.prefix,
    /** The SPEC state machine's stored status; an expired key keeps it. */
    status: key.status,
    /** What to show: "expired" once the key's expiry time has come (unless revoked), else status. */
    effective_status: effectiveStatus(key, now),
    budget_cap_usd: key.budgetCap === null ? null : formatUsd(key.budgetCap),
    spent_usd: formatUsd(key.spent),
    token_cap: key.tokenCap,
    tokens_used: key.tokensUsed,
  };
}

/** `now`: the gateway's clock, which judges expiry (ctx.pipeline.authCache.now). */
export function keyView(key: ApiKey, now = Date.now()) {
  return {
    ...keyFacts(key, now),
    clamp_output: key.clampOutput,
    policy: keyPolicyJson(key, now),
    limits: subjectLimitsJson(key.limits),
    created_at: iso(key.createdAt),
    revoked_at: iso(key.revokedAt),
    last_used_at: iso(key.lastUsedAt),
  };
}

export function inviteView(invite: Invite, now = Date.now()) {
  const state: "used" | "expired" | "pending" = invite.usedAt !== null ? "used" : invite.expiresAt <= now ? "expired" : "pending";
  return {
    id: invite.id,
    workspace_id: invite.workspaceId,
    role: invite.role,
    state,
    created_by: invite.createdBy,
    created_at: iso(invite.createdAt),
    expires_at: iso(invite.expiresAt),
    used_at: iso(invite.usedAt),
    used_by: invite.usedBy,
  };
}
