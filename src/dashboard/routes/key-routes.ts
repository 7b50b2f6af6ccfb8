// Sub-keys of the signed-in account: create (raw key once plus a show-again token), list, read,
// caps, revoke, permanent delete, enable. Another account's key answers 404 exactly like a missing
// one. Every revoke or delete drops the key from this process's auth cache at once; other processes
// follow the auth_events row the store wrote.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { RouteContext } from "../../http/route-context.js";
import { GatewayError } from "../../errors/catalogue.js";
import type { ApiKey } from "../../store/keys-store.js";
import { checkedPolicy, policyChange, policyFields } from "../../admin/key-policy-fields.js";
import { createKey, revokeKey as auditedRevoke } from "../../admin/operations.js";
import type { AuditActor } from "../../store/audit-store.js";
import { dashboardActor } from "./admin-routes.js";
import { limitSubjectsOf, NO_TIER_LIMITS, subjectLimitsSchema } from "../../core/traffic-limits.js";
import { trafficUse } from "../../billing/traffic-usage.js";
import { idParam, parseWith, requireConfirm, tokenCount, usdAmount } from "../../admin/validate.js";
import { iso, keyView } from "../../admin/account-views.js";

const POLICY_FIELDS = Object.keys(policyFields) as Array<keyof typeof policyFields>;

const createBody = z.object({
  ...policyFields,
  name: z.string().trim().max(100).optional(),
  budget_cap_usd: usdAmount.nullable().optional(),
  token_cap: tokenCount.nullable().optional(),
  /** Output clamping (docs/billing.md, "Clamping"); default on. */
  clamp_output: z.boolean().optional(),
  /** The key's own rate and concurrency limits (docs/billing.md); absent or null: the tier's. */
  limits: subjectLimitsSchema.nullable().optional(),
  workspace_id: z.string().min(1).max(100).nullable().optional(),
  /** Administrators may mint a key under another account. */
  account_id: z.string().min(1).max(100).optional(),
});
const capsBody = z
  .object({
    ...policyFields,
    budget_cap_usd: usdAmount.nullable().optional(),
    token_cap: tokenCount.nullable().optional(),
    clamp_output: z.boolean().optional(),
    limits: subjectLimitsSchema.nullable().optional(),
  })
  .refine(
    (b) => b.budget_cap_usd !== undefined || b.token_cap !== undefined || b.clamp_output !== undefined || b.limits !== undefined || POLICY_FIELDS.some((f) => b[f] !== undefined),
    {
      message: `give budget_cap_usd, token_cap (null removes a cap), clamp_output, limits (null removes them) or a policy field (${POLICY_FIELDS.join(", ")})`,
    },
  );
const showAgainBody = z.object({ token: z.string().min(1).max(200) });
const params = z.object({ id: idParam });

/** Every request schema of this file (OpenAPI is generated from these). */
export const keyRouteSchemas = { params, createBody, capsBody, showAgainBody };

/** The signed-in account's key, or 404 for a missing key and for anyone else's. */
export async function ownKey(ctx: RouteContext, accountId: string, id: string): Promise<ApiKey> {
  const key = await ctx.store.keys.get(id);
  if (!key || key.accountId !== accountId) throw new GatewayError("not_found", `No key ${id}.`);
  return key;
}

/**
 * Revokes a key and makes the gateway refuse it now, in this process and (via auth_events) others.
 * With an actor (someone else's key), the revocation is audited.
 */
export async function revokeKey(ctx: RouteContext, key: ApiKey, actor: AuditActor | null = null): Promise<ApiKey> {
  const revoked = actor === null ? await ctx.store.keys.revoke(key.id) : await ctx.store.audited(actor, (tx) => auditedRevoke(tx, key.id));
  ctx.pipeline.authCache.invalidateKey(key.hash);
  await ctx.store.showAgain.forgetKey(key.id);
  return revoked;
}

export function registerKeyRoutes(app: FastifyInstance, ctx: RouteContext): void {
  // The gateway's clock judges expiry (tests inject one).
  const now = () => ctx.pipeline.authCache.now();
  const view = (key: ApiKey) => keyView(key, now());

  app.get("/keys", async (request) => {
    const keys = await ctx.store.keys.listByAccount(request.dashboard.account.id);
    return { data: keys.map(view) };
  });

  app.post("/keys", async (request, reply) => {
    const me = request.dashboard.account;
    const body = parseWith(createBody, request.body);
    const accountId = body.account_id ?? me.id;
    if (accountId !== me.id && !me.isAdmin) {
      throw new GatewayError("forbidden", "Only administrators may create keys for another account.", { param: "account_id" });
    }
    if (body.workspace_id) {
      // The key's owner must belong to the workspace it is shared in; a stranger's workspace is a 404.
      const role = await ctx.store.workspaces.roleOf(body.workspace_id, accountId);
      if (!role) throw new GatewayError("not_found", `No workspace ${body.workspace_id}.`, { param: "workspace_id" });
    }
    const policy = await checkedPolicy(ctx, request.snapshot.config, accountId, policyChange(body), null);
    const input = {
      accountId,
      policy,
      name: body.name ?? "",
      workspaceId: body.workspace_id ?? null,
      budgetCap: body.budget_cap_usd ?? null,
      tokenCap: body.token_cap ?? null,
      ...(body.clamp_output !== undefined && { clampOutput: body.clamp_output }),
      ...(body.limits != null && { limits: body.limits }),
      actorAccountId: me.id,
    };
    // An administrator minting a key under another account is an administrative change: audited.
    const { key, raw } = accountId === me.id ? await ctx.store.keys.create(input) : await ctx.store.audited(dashboardActor(request), (tx) => createKey(tx, input));
    // Bound to the account that saw the raw key (the signed-in one) and to this key.
    const again = await ctx.store.showAgain.put({ accountId: me.id, keyId: key.id, raw });
    reply.code(201);
    return { key: view(key), raw_key: raw, show_again: { token: again.token, expires_at: iso(again.expiresAt) } };
  });

  app.get("/keys/:id", async (request) => {
    const { id } = parseWith(params, request.params, "id");
    const key = await ownKey(ctx, request.dashboard.account.id, id);
    const usage = await ctx.billing.keyUsage(key.id);
    const owner = await ctx.store.accounts.get(key.accountId);
    // Every rate and concurrency limit that applies to the key, with the current window's use.
    const traffic = owner
      ? await trafficUse(ctx.store.db, request.snapshot.config.tierLimits.get(owner.tier) ?? NO_TIER_LIMITS, limitSubjectsOf({ key, account: owner }), Date.now())
      : [];
    return {
      key: view(key),
      usage: { requests: usage.totals.requests, input_tokens: usage.totals.inputTokens, output_tokens: usage.totals.outputTokens },
      traffic,
    };
  });

  app.patch("/keys/:id", async (request) => {
    const { id } = parseWith(params, request.params, "id");
    const body = parseWith(capsBody, request.body);
    const changes = {
      ...(body.budget_cap_usd !== undefined && { budgetCap: body.budget_cap_usd }),
      ...(body.token_cap !== undefined && { tokenCap: body.token_cap }),
    };
    let key = await ownKey(ctx, request.dashboard.account.id, id);
    // Validated before anything is written: a bad field changes nothing.
    const change = policyChange(body);
    const policy = Object.keys(change).length > 0 ? await checkedPolicy(ctx, request.snapshot.config, key.accountId, change, key) : null;
    if (policy) key = await ctx.store.keys.setPolicy(id, policy);
    if (changes.budgetCap !== undefined || changes.tokenCap !== undefined) key = await ctx.billing.setKeyCaps(id, changes, request.dashboard.account.id);
    if (body.clamp_output !== undefined) key = await ctx.store.keys.setClampOutput(id, body.clamp_output);
    if (body.limits !== undefined) key = await ctx.store.keys.setLimits(id, body.limits);
    // Caps can move a key between enabled and exhausted, and the policy travels with the cached key:
    // cached copies must not keep the old ones (other processes follow auth_events).
    ctx.pipeline.authCache.invalidateKey(key.hash);
    return { key: view(key) };
  });

  app.delete("/keys/:id", async (request) => {
    const { id } = parseWith(params, request.params, "id");
    const { permanent } = requireConfirm(request.query as Record<string, unknown>);
    const key = await ownKey(ctx, request.dashboard.account.id, id);
    if (permanent) {
      const deleted = await ctx.store.keys.deletePermanently(key.id);
      ctx.pipeline.authCache.invalidateKey(deleted.hash);
      return { id: deleted.id, deleted: true };
    }
    return { key: view(await revokeKey(ctx, key)) };
  });

  app.post("/keys/:id/enable", async (request) => {
    const { id } = parseWith(params, request.params, "id");
    await ownKey(ctx, request.dashboard.account.id, id);
    return { key: view(await ctx.store.keys.enable(id)) };
  });

  app.post("/keys/:id/show-again", async (request) => {
    const { id } = parseWith(params, request.params, "id");
    const { token } = parseWith(showAgainBody, request.body);
    // No ownership lookup first: the token's binding is the check, and every failure is the same 410.
    const shown = await ctx.store.showAgain.reveal({ token, accountId: request.dashboard.account.id, keyId: id });
    return { id, raw_key: shown.raw, expires_at: iso(shown.expiresAt) };
  });
}
