// Workspaces, members, invites, and what a workspace shares: the keys its members tagged with it and
// a usage view over those keys. Roles (docs/dashboard.md has the table):
//   member: see the workspace, its members, its keys and usage; tag own new keys with it; leave.
//   admin:  also invite (as member), list and withdraw invites, remove members, revoke workspace keys.
//   owner:  also invite admins, change roles, remove admins. The owner cannot leave or be demoted.
// A workspace the account does not belong to answers 404, as if it did not exist; except to an
// administrator, who reads every workspace's page (members, keys, budgets, usage) and changes none
// it does not belong to (403).
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { RouteContext } from "../../http/route-context.js";
import { usageDaysQuery } from "../../admin/routes/route.js";
import { GatewayError } from "../../errors/catalogue.js";
import type { Role } from "../../store/tables.js";
import type { Workspace } from "../../store/workspaces-store.js";
import { usageSummary } from "../../admin/usage-queries.js";
import { idParam, parseWith, requireConfirm } from "../../admin/validate.js";
import { inviteView, iso, keyView } from "../../admin/account-views.js";
import { createInvite, removeMember, revokeInvite, setMemberRole } from "../../admin/operations.js";
import { dashboardActor, requireAdmin } from "./admin-routes.js";
import { requireActive } from "../session-auth.js";
import type { Account } from "../../store/accounts-store.js";
import { revokeKey } from "./key-routes.js";
import { policyChange, setWorkspaceBudgets, workspaceBudgetsBody, workspaceBudgetsView, workspaceListQuery, workspaceListView } from "../../admin/workspace-budgets.js";

const RANK: Record<Role, number> = { member: 0, admin: 1, owner: 2 };
const nameBody = z.object({ name: z.string().trim().min(1, "must not be empty").max(100) });
const inviteBody = z.object({ role: z.enum(["member", "admin"]).default("member"), expires_in_hours: z.number().int().min(1).max(720).default(168) });
const roleBody = z.object({ role: z.enum(["member", "admin"]) });
const tokenBody = z.object({ token: z.string().min(1).max(200) });
const wsParams = z.object({ id: idParam });
const memberParams = z.object({ id: idParam, accountId: idParam });
const inviteParams = z.object({ id: idParam, inviteId: idParam });
const keyParams = z.object({ id: idParam, keyId: idParam });

/** Every request schema of this file (OpenAPI is generated from these). */
export const workspaceRouteSchemas = {
  nameBody,
  inviteBody,
  roleBody,
  tokenBody,
  wsParams,
  memberParams,
  inviteParams,
  keyParams,
  daysQuery: usageDaysQuery,
  budgetsBody: workspaceBudgetsBody,
  listQuery: workspaceListQuery,
};

function workspaceView(ws: Workspace) {
  return { id: ws.id, name: ws.name, created_by: ws.createdBy, created_at: iso(ws.createdAt) };
}

export async function membershipOf(ctx: RouteContext, workspaceId: string, me: Account): Promise<{ workspace: Workspace; role: Role }> {
  const role = await ctx.store.workspaces.roleOf(workspaceId, me.id);
  const workspace = role ? await ctx.store.workspaces.get(workspaceId) : null;
  if (!role || !workspace) {
    // An administrator reads every workspace (readerOf) but changes only those it belongs to.
    if (me.isAdmin && (await ctx.store.workspaces.get(workspaceId))) {
      throw new GatewayError("forbidden", "Administrators see every workspace; only its members change it (budgets: the admin API).");
    }
    throw new GatewayError("not_found", `No workspace ${workspaceId}.`);
  }
  return { workspace, role };
}

/**
 * The reader's role, or null for an active administrator who is not a member: administrators see
 * every workspace's page (issue 41 item 4), read-only. Anyone else outside it gets 404.
 */
async function readerOf(ctx: RouteContext, workspaceId: string, me: Account): Promise<{ workspace: Workspace; role: Role | null }> {
  const role = await ctx.store.workspaces.roleOf(workspaceId, me.id);
  if (role || !me.isAdmin) return membershipOf(ctx, workspaceId, me);
  requireActive(me);
  const workspace = await ctx.store.workspaces.get(workspaceId);
  if (!workspace) throw new GatewayError("not_found", `No workspace ${workspaceId}.`);
  return { workspace, role: null };
}

export function requireRole(role: Role, needed: Role, action: string): void {
  if (RANK[role] < RANK[needed]) {
    throw new GatewayError("forbidden", `Only a workspace ${needed === "owner" ? "owner" : "owner or admin"} may ${action}; your role is ${role}.`);
  }
}

export function registerWorkspaceRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const ws = ctx.store.workspaces;

  app.get("/workspaces", async (request) => {
    const list = await ws.listForAccount(request.dashboard.account.id);
    return { data: list.map((w) => ({ ...workspaceView(w), role: w.role, members: w.members })) };
  });

  // Administrators: every workspace with its budget and this month's spend (the Teams page).
  app.get("/admin/workspaces", async (request) => {
    requireAdmin(request);
    return workspaceListView(ctx.store, parseWith(workspaceListQuery, request.query, "query"), ctx.pipeline.authCache.now());
  });

  app.post("/workspaces", async (request, reply) => {
    const { name } = parseWith(nameBody, request.body);
    const workspace = await ws.create(name, request.dashboard.account.id);
    reply.code(201);
    return { workspace: workspaceView(workspace), role: "owner" };
  });

  app.get("/workspaces/:id", async (request) => {
    const { id } = parseWith(wsParams, request.params, "id");
    const { workspace, role } = await readerOf(ctx, id, request.dashboard.account);
    const members = await ws.members(id);
    return {
      workspace: workspaceView(workspace),
      role,
      members: members.map((m) => ({ account_id: m.accountId, email: m.email, role: m.role, joined_at: iso(m.joinedAt) })),
    };
  });

  app.patch("/workspaces/:id/members/:accountId", async (request) => {
    const { id, accountId } = parseWith(memberParams, request.params, "id");
    const { role: newRole } = parseWith(roleBody, request.body);
    const { role } = await membershipOf(ctx, id, request.dashboard.account);
    requireRole(role, "owner", "change roles");
    const member = await ctx.store.audited(dashboardActor(request), (tx) => setMemberRole(tx, id, accountId, newRole));
    return { member: { account_id: member.accountId, email: member.email, role: member.role, joined_at: iso(member.joinedAt) } };
  });

  app.delete("/workspaces/:id/members/:accountId", async (request, reply) => {
    const { id, accountId } = parseWith(memberParams, request.params, "id");
    const me = request.dashboard.account.id;
    const { role } = await membershipOf(ctx, id, request.dashboard.account);
    if (accountId !== me) {
      const target = await ws.roleOf(id, accountId);
      if (!target) throw new GatewayError("not_found", `No member ${accountId} in this workspace.`);
      // Admins manage members; only the owner removes admins.
      requireRole(role, target === "member" ? "admin" : "owner", target === "member" ? "remove members" : "remove admins");
    }
    // Leaving is the member's own business; removing someone else is an administrative change.
    if (accountId === me) await ws.removeMember(id, accountId);
    else await ctx.store.audited(dashboardActor(request), (tx) => removeMember(tx, id, accountId));
    return reply.code(204).send();
  });

  app.get("/workspaces/:id/invites", async (request) => {
    const { id } = parseWith(wsParams, request.params, "id");
    const { role } = await membershipOf(ctx, id, request.dashboard.account);
    requireRole(role, "admin", "see invites");
    const invites = await ws.listInvites(id);
    return { data: invites.map((i) => inviteView(i)) };
  });

  app.post("/workspaces/:id/invites", async (request, reply) => {
    const { id } = parseWith(wsParams, request.params, "id");
    const body = parseWith(inviteBody, request.body);
    const { role } = await membershipOf(ctx, id, request.dashboard.account);
    requireRole(role, body.role === "admin" ? "owner" : "admin", body.role === "admin" ? "invite admins" : "invite members");
    const input = { workspaceId: id, role: body.role, createdBy: request.dashboard.account.id, ttlMs: body.expires_in_hours * 3_600_000 };
    const { invite, token } = await ctx.store.audited(dashboardActor(request), (tx) => createInvite(tx, input));
    reply.code(201);
    // The token travels in the URL fragment, which browsers never send to a server or a Referer.
    return { invite: inviteView(invite), token, url: `/dashboard/invite#${token}` };
  });

  app.delete("/workspaces/:id/invites/:inviteId", async (request, reply) => {
    const { id, inviteId } = parseWith(inviteParams, request.params, "id");
    const { role } = await membershipOf(ctx, id, request.dashboard.account);
    requireRole(role, "admin", "withdraw invites");
    await ctx.store.audited(dashboardActor(request), (tx) => revokeInvite(tx, id, inviteId));
    return reply.code(204).send();
  });

  app.post("/invites/accept", async (request) => {
    const { token } = parseWith(tokenBody, request.body);
    const { workspace, role } = await ws.acceptInvite(token, request.dashboard.account.id);
    return { workspace: workspaceView(workspace), role };
  });

  app.get("/workspaces/:id/keys", async (request) => {
    const { id } = parseWith(wsParams, request.params, "id");
    await readerOf(ctx, id, request.dashboard.account);
    const [keys, members] = await Promise.all([ctx.store.keys.listByWorkspace(id), ws.members(id)]);
    const emails = new Map(members.map((m) => [m.accountId, m.email]));
    return { data: keys.map((k) => ({ ...keyView(k), owner_email: emails.get(k.accountId) ?? null })) };
  });

  app.delete("/workspaces/:id/keys/:keyId", async (request) => {
    const { id, keyId } = parseWith(keyParams, request.params, "id");
    const { permanent } = requireConfirm(request.query as Record<string, unknown>);
    const { role } = await membershipOf(ctx, id, request.dashboard.account);
    const key = await ctx.store.keys.get(keyId);
    if (!key || key.workspaceId !== id) throw new GatewayError("not_found", `No key ${keyId} in this workspace.`);
    if (key.accountId !== request.dashboard.account.id) requireRole(role, "admin", "revoke other members' keys");
    // Permanent deletion stays with the key's owner, on /dashboard/api/keys/:id.
    if (permanent) throw new GatewayError("invalid_request", "Workspace routes only revoke; the key's owner deletes it permanently.", { param: "permanent" });
    // Revoking another member's key is an administrative change: audited.
    const actor = key.accountId === request.dashboard.account.id ? null : dashboardActor(request);
    return { key: keyView(await revokeKey(ctx, key, actor)) };
  });

  // The workspace's budgets and models with this month's use (ADR 0037): every member sees them; owners and admins set them (audited).
  app.get("/workspaces/:id/budgets", async (request) => {
    const { id } = parseWith(wsParams, request.params, "id");
    await readerOf(ctx, id, request.dashboard.account);
    return workspaceBudgetsView(ctx.store, id, ctx.pipeline.authCache.now());
  });

  app.patch("/workspaces/:id/budgets", async (request) => {
    const { id } = parseWith(wsParams, request.params, "id");
    const { role } = await membershipOf(ctx, id, request.dashboard.account);
    requireRole(role, "admin", "set the workspace's budgets and models");
    const change = policyChange(parseWith(workspaceBudgetsBody, request.body), request.snapshot.config);
    await setWorkspaceBudgets(ctx.store, dashboardActor(request), id, change);
    // This process drops the workspace's keys at once (the others within a poll of auth_events).
    await ctx.pipeline.authCache.poll();
    return workspaceBudgetsView(ctx.store, id, ctx.pipeline.authCache.now());
  });

  app.get("/workspaces/:id/usage", async (request) => {
    const { id } = parseWith(wsParams, request.params, "id");
    const { days } = parseWith(usageDaysQuery, request.query, "query");
    await readerOf(ctx, id, request.dashboard.account);
    return usageSummary(ctx.store.db, { workspaceId: id }, days);
  });
}
