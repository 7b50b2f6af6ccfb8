// Applies a company sign-in's identity (src/accounts/company-claims.ts) in one audited transaction:
// the account found by its verified email, or created just in time (no password, the default tier,
// no balance); the administrator flag set from the admin claim when one is configured; and the
// memberships of the mapped workspaces made to follow the group claim (owners are left alone).
import type { FastifyRequest } from "fastify";
import type { CompanyIdentity } from "../accounts/company-claims.js";
import type { OidcSettings } from "../config/oidc-settings.js";
import type { RouteContext } from "../http/route-context.js";
import { addMember, createAccount, removeMember, setMemberRole, updateAccount } from "../admin/operations.js";
import type { Account } from "../store/accounts-store.js";

export async function signInCompanyPerson(
  ctx: RouteContext,
  request: FastifyRequest,
  settings: OidcSettings,
  identity: CompanyIdentity,
): Promise<{ account: Account; created: boolean }> {
  const actor = { type: "dashboard" as const, id: null, name: identity.email, clientAddress: request.ip, requestId: request.id };
  return ctx.store.audited(actor, async (tx) => {
    let account = await tx.accounts.getByEmail(identity.email);
    const created = account === null;
    if (account === null) {
      account = await createAccount(tx, { email: identity.email, tier: request.snapshot.config.defaultTier, balance: 0n, ...(identity.isAdmin && { isAdmin: true }) });
    } else if (identity.isAdmin !== null && identity.isAdmin !== account.isAdmin) {
      account = await updateAccount(tx, account.id, { isAdmin: identity.isAdmin });
    }
    for (const workspaceId of mappedWorkspaceIds(settings)) {
      const wanted = identity.workspaceRoles.get(workspaceId) ?? null;
      const current = await tx.workspaces.roleOf(workspaceId, account.id);
      if (current === "owner" || current === wanted) continue;
      if (wanted === null) await removeMember(tx, workspaceId, account.id);
      else if (current === null) await addMember(tx, workspaceId, account.id, wanted);
      else await setMemberRole(tx, workspaceId, account.id, wanted);
    }
    return { account, created };
  });
}

/** Each workspace the group map names, once. */
function mappedWorkspaceIds(settings: OidcSettings): Set<string> {
  return new Set([...(settings.workspaces?.map.values() ?? [])].map((entry) => entry.workspaceId));
}
