// Administrative changes with their audit rows, shared by the admin API, the dashboard's
// administrator routes and the CLI: each runs the existing store method (its rules, transitions and
// balance invariants) inside the audited transaction (Store.audited) and records what changed.
// Cache invalidation after the commit stays with the caller (it knows its process's caches).
import type { SubjectLimitsInput } from "../core/traffic-limits.js";
import type { Nano } from "../core/money.js";
import { formatUsd } from "../core/money.js";
import { GatewayError } from "../errors/catalogue.js";
import { setKeyCaps, type KeyCapsChange } from "../billing/key-caps.js";
import type { Account, AccountsStore, NewAccount } from "../store/accounts-store.js";
import type { AdminToken } from "../store/admin-tokens-store.js";
import { changedFields } from "../store/audit-store.js";
import type { AuditedTransaction } from "../store/index.js";
import type { ApiKey, KeyPolicyChange, KeysStore } from "../store/keys-store.js";
import type { UpstreamKeyInfo } from "../store/upstream-keys-store.js";
import type { Invite, Member } from "../store/workspaces-store.js";
import type { Role } from "../store/tables.js";
import type { NewRedemptionCodes, RedemptionCode } from "../store/redemption-codes-store.js";
import { accountAuditFields, adminTokenAuditFields, codeAuditFields, keyAuditFields, providerKeyAuditFields } from "./audit-fields.js";

export type AccountChanges = Parameters<AccountsStore["update"]>[1];
export type NewKey = Parameters<KeysStore["create"]>[0];

async function existingAccount(tx: AuditedTransaction, id: string): Promise<Account> {
  const account = await tx.accounts.get(id);
  if (!account) throw new GatewayError("account_not_found", `no account ${id}`);
  return account;
}

async function existingKey(tx: AuditedTransaction, id: string): Promise<ApiKey> {
  const key = await tx.keys.get(id);
  if (!key) throw new GatewayError("not_found", `no key ${id}`);
  return key;
}

export async function createAccount(tx: AuditedTransaction, input: NewAccount): Promise<Account> {
  const account = await tx.accounts.create(input);
  await tx.record({ action: "account.create", targetType: "account", targetId: account.id, before: null, after: accountAuditFields(account) });
  return account;
}

/** Changes an account's settings; a change that alters nothing writes no audit row. */
export async function updateAccount(tx: AuditedTransaction, id: string, changes: AccountChanges): Promise<Account> {
  const before = await existingAccount(tx, id);
  const after = await tx.accounts.update(id, changes);
  const diff = changedFields(accountAuditFields(before), accountAuditFields(after));
  if (Object.keys(diff.after).length > 0) await tx.record({ action: "account.update", targetType: "account", targetId: id, ...diff });
  return after;
}

/** A credit (delta > 0) or debit with its ledger row, its reason in the ledger note and the audit row. */
export async function adjustBalance(tx: AuditedTransaction, id: string, delta: Nano, reason: string | null): Promise<Account> {
  const before = await existingAccount(tx, id);
  const after = await tx.accounts.adjustBalance(id, delta, reason);
  await tx.record({
    action: delta > 0n ? "account.credit" : "account.debit",
    targetType: "account",
    targetId: id,
    before: { balance_usd: formatUsd(before.balance) },
    after: { balance_usd: formatUsd(after.balance), amount_usd: formatUsd(delta > 0n ? delta : -delta), reason },
  });
  return after;
}

export async function createKey(tx: AuditedTransaction, input: NewKey): Promise<{ key: ApiKey; raw: string }> {
  const created = await tx.keys.create(input);
  await tx.record({ action: "key.create", targetType: "key", targetId: created.key.id, before: null, after: keyAuditFields(created.key) });
  return created;
}

export async function revokeKey(tx: AuditedTransaction, id: string): Promise<ApiKey> {
  const before = await existingKey(tx, id);
  const after = await tx.keys.revoke(id);
  if (before.status !== after.status) {
    await tx.record({ action: "key.revoke", targetType: "key", targetId: id, ...changedFields(keyAuditFields(before), keyAuditFields(after)) });
  }
  return after;
}

export async function deleteKeyPermanently(tx: AuditedTransaction, id: string): Promise<ApiKey> {
  const deleted = await tx.keys.deletePermanently(id);
  await tx.record({ action: "key.delete", targetType: "key", targetId: id, before: keyAuditFields(deleted), after: null });
  return deleted;
}

/** Caps (key-caps.ts), the clamping flag and the policy (validated by the caller: validateKeyPolicy) of one key. */
export async function updateKey(
  tx: AuditedTransaction,
  id: string,
  changes: KeyCapsChange & { clampOutput?: boolean; policy?: KeyPolicyChange; limits?: SubjectLimitsInput | null },
  actorAccountId: string | null,
): Promise<ApiKey> {
  const before = await existingKey(tx, id);
  let after = before;
  if (changes.budgetCap !== undefined || changes.tokenCap !== undefined) {
    after = await setKeyCaps(tx.trx, id, { budgetCap: changes.budgetCap, tokenCap: changes.tokenCap }, actorAccountId, Date.now());
  }
  if (changes.clampOutput !== undefined) after = await tx.keys.setClampOutput(id, changes.clampOutput);
  if (changes.policy !== undefined) after = await tx.keys.setPolicy(id, changes.policy);
  if (changes.limits !== undefined) after = await tx.keys.setLimits(id, changes.limits);
  const diff = changedFields(keyAuditFields(before), keyAuditFields(after));
  if (Object.keys(diff.after).length > 0) await tx.record({ action: "key.update", targetType: "key", targetId: id, ...diff });
  return after;
}

export async function addProviderKey(tx: AuditedTransaction, input: { accountId: string; provider: string; key: string; label?: string }): Promise<UpstreamKeyInfo> {
  const info = await tx.upstreamKeys.add(input);
  await tx.record({ action: "provider_key.add", targetType: "provider_key", targetId: info.id, before: null, after: providerKeyAuditFields(info) });
  return info;
}

/** Removes one of an account's provider keys; with accountId, another account's key is a 404. */
export async function removeProviderKey(tx: AuditedTransaction, id: string, accountId?: string): Promise<void> {
  const row = await tx.trx.selectFrom("upstream_keys").select(["id", "account_id", "provider", "label", "last4", "created_at"]).where("id", "=", id).executeTakeFirst();
  if (!row || (accountId !== undefined && row.account_id !== accountId)) throw new GatewayError("not_found", `no upstream key ${id}`);
  await tx.upstreamKeys.remove(id);
  const info = { id: row.id, accountId: row.account_id, provider: row.provider, label: row.label, last4: row.last4, createdAt: Number(row.created_at) };
  await tx.record({ action: "provider_key.remove", targetType: "provider_key", targetId: id, before: providerKeyAuditFields(info), after: null });
}

/** Mints redemption codes, one audit row per code (never its text: that is shown once, to the caller). */
export async function mintCodes(tx: AuditedTransaction, input: NewRedemptionCodes): Promise<Array<{ code: RedemptionCode; raw: string }>> {
  const minted = await tx.codes.mint(input);
  for (const { code } of minted) await tx.record({ action: "code.mint", targetType: "redemption_code", targetId: code.id, before: null, after: codeAuditFields(code) });
  return minted;
}

/** Revokes an unused code; revoking a revoked one changes nothing and writes no audit row. */
export async function revokeCode(tx: AuditedTransaction, id: string): Promise<RedemptionCode> {
  const before = await tx.codes.get(id);
  if (!before) throw new GatewayError("not_found", `No redemption code ${id}.`);
  const after = await tx.codes.revoke(id);
  if (before.revokedAt === null) {
    await tx.record({ action: "code.revoke", targetType: "redemption_code", targetId: id, ...changedFields(codeAuditFields(before), codeAuditFields(after)) });
  }
  return after;
}

export async function createAdminToken(tx: AuditedTransaction, input: { name: string; scopes: readonly string[] }): Promise<{ token: AdminToken; raw: string }> {
  const created = await tx.adminTokens.create(input);
  await tx.record({ action: "admin_token.create", targetType: "admin_token", targetId: created.token.id, before: null, after: adminTokenAuditFields(created.token) });
  return created;
}

export async function revokeAdminToken(tx: AuditedTransaction, id: string): Promise<AdminToken> {
  const before = await tx.adminTokens.get(id);
  if (!before) throw new GatewayError("not_found", `no admin token ${id}`);
  const after = await tx.adminTokens.revoke(id);
  if (before.revokedAt === null) {
    await tx.record({ action: "admin_token.revoke", targetType: "admin_token", targetId: id, before: adminTokenAuditFields(before), after: adminTokenAuditFields(after) });
  }
  return after;
}

// Workspace owner and admin actions (docs/dashboard.md has the roles); target: the workspace.

export async function addMember(tx: AuditedTransaction, workspaceId: string, accountId: string, role: Exclude<Role, "owner">): Promise<Member> {
  const member = await tx.workspaces.addMember(workspaceId, accountId, role);
  await tx.record({ action: "workspace.member_add", targetType: "workspace", targetId: workspaceId, before: null, after: { account_id: accountId, role } });
  return member;
}

export async function setMemberRole(tx: AuditedTransaction, workspaceId: string, accountId: string, role: Exclude<Role, "owner">): Promise<Member> {
  const before = await tx.workspaces.roleOf(workspaceId, accountId);
  const member = await tx.workspaces.setRole(workspaceId, accountId, role);
  if (before !== role) {
    await tx.record({
      action: "workspace.member_role",
      targetType: "workspace",
      targetId: workspaceId,
      before: { account_id: accountId, role: before },
      after: { account_id: accountId, role },
    });
  }
  return member;
}

export async function removeMember(tx: AuditedTransaction, workspaceId: string, accountId: string): Promise<void> {
  const before = await tx.workspaces.roleOf(workspaceId, accountId);
  await tx.workspaces.removeMember(workspaceId, accountId);
  await tx.record({ action: "workspace.member_remove", targetType: "workspace", targetId: workspaceId, before: { account_id: accountId, role: before }, after: null });
}

export async function createInvite(tx: AuditedTransaction, input: Parameters<AuditedTransaction["workspaces"]["createInvite"]>[0]): Promise<{ invite: Invite; token: string }> {
  const created = await tx.workspaces.createInvite(input);
  await tx.record({
    action: "workspace.invite_create",
    targetType: "workspace",
    targetId: input.workspaceId,
    before: null,
    after: { invite_id: created.invite.id, role: created.invite.role, expires_at: new Date(created.invite.expiresAt).toISOString() },
  });
  return created;
}

export async function revokeInvite(tx: AuditedTransaction, workspaceId: string, inviteId: string): Promise<void> {
  await tx.workspaces.revokeInvite(workspaceId, inviteId);
  await tx.record({ action: "workspace.invite_revoke", targetType: "workspace", targetId: workspaceId, before: { invite_id: inviteId }, after: null });
}
