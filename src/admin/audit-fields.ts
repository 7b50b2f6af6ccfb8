// What the audit log records of each kind of target: the administrable fields, money as decimal
// strings. An audit row keeps the ones a change altered (changedFields), before and after.
import { subjectLimitsJson } from "../core/traffic-limits.js";
import { formatUsd } from "../core/money.js";
import type { Account } from "../store/accounts-store.js";
import type { AdminToken } from "../store/admin-tokens-store.js";
import type { ApiKey } from "../store/keys-store.js";
import type { RedemptionCode } from "../store/redemption-codes-store.js";
import type { UpstreamKeyInfo } from "../store/upstream-keys-store.js";

const usdOrNull = (nano: bigint | null) => (nano === null ? null : formatUsd(nano));

export function accountAuditFields(a: Account) {
  return {
    email: a.email,
    status: a.status,
    tier: a.tier,
    is_admin: a.isAdmin,
    balance_usd: formatUsd(a.balance),
    monthly_budget_usd: usdOrNull(a.monthlyBudget),
    monthly_token_budget: a.monthlyTokenBudget,
    default_model: a.defaultModel,
    clamp_output: a.clampOutput,
    limits: subjectLimitsJson(a.limits),
  };
}

export function keyAuditFields(k: ApiKey) {
  return {
    account_id: k.accountId,
    workspace_id: k.workspaceId,
    name: k.name,
    prefix: k.prefix,
    status: k.status,
    budget_cap_usd: usdOrNull(k.budgetCap),
    token_cap: k.tokenCap,
    clamp_output: k.clampOutput,
    allowed_models: k.allowedModels,
    allowed_networks: k.allowedNetworks,
    allowed_mcp: k.allowedMcp,
    expires_at: k.expiresAt === null ? null : new Date(k.expiresAt).toISOString(),
    period: k.period,
    period_budget_usd: usdOrNull(k.periodBudget),
    period_token_cap: k.periodTokenCap,
    limits: subjectLimitsJson(k.limits),
    guardrails: k.guardrails,
    default_tags: k.defaultTags,
  };
}

export function providerKeyAuditFields(k: UpstreamKeyInfo) {
  return { account_id: k.accountId, provider: k.provider, label: k.label, last4: k.last4 };
}

export function adminTokenAuditFields(t: AdminToken) {
  return { name: t.name, prefix: t.prefix, scopes: t.scopes, revoked: t.revokedAt !== null };
}

export function codeAuditFields(c: RedemptionCode) {
  return {
    prefix: c.prefix,
    value_usd: formatUsd(c.value),
    batch: c.batch,
    note: c.note,
    expires_at: new Date(c.expiresAt).toISOString(),
    revoked_at: c.revokedAt === null ? null : new Date(c.revokedAt).toISOString(),
  };
}
