// Administrators (accounts.is_admin = 1; the bootstrap account is one) search accounts, create people
// (an account and its set-password link) and issue password reset links, and change their status,
// admin flag, tier, budgets, clamping and limits; credit or debit them with a reason;
// manage each account's provider keys; see usage across all accounts and every upstream key's circuit
// breaker (docs/dashboard.md, "Administration"). The writes run the admin API's operations
// (src/admin/operations.ts) in audited transactions. A change drops the account's keys from this
// process's auth cache at once, so a suspended or closed account's keys get 402 account_suspended on
// the very next gateway request (other processes follow the auth_events row the update writes).
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import type { RouteContext } from "../../http/route-context.js";
import { subjectLimitsSchema } from "../../core/traffic-limits.js";
import { GatewayError } from "../../errors/catalogue.js";
import { ACCOUNT_STATUSES, type Account, type AccountStatus } from "../../store/accounts-store.js";
import { accountSchemas } from "../../admin/routes/accounts.js";
import { accountOr404, ledgerPageQueryParams, usageDaysQuery } from "../../admin/routes/route.js";
import { invalidateOwnKeys, providerKeySchemas } from "../../admin/routes/provider-keys.js";
import { addProviderKey, adjustBalance, removeProviderKey, updateAccount, type AccountChanges } from "../../admin/operations.js";
import { adminAccountView, auditView, providerKeyView } from "../../admin/views.js";
import { searchAccounts } from "../../store/account-search.js";
import { ledgerPage, ledgerRowsView, usageAcrossAccounts } from "../../admin/usage-queries.js";
import type { AuditActor } from "../../store/audit-store.js";
import { upstreamStatuses } from "../../pipeline/upstream-status.js";
import { requireActive } from "../session-auth.js";
import { email, idParam, parseWith } from "../../admin/validate.js";
import { createPerson, issuePasswordLink, passwordLinkView, requestBaseUrl } from "../../admin/password-links.js";

const auditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  before: z
    .string()
    .regex(/^\d{1,19}$/)
    .optional(),
  target_id: idParam.optional(),
  actor_id: idParam.optional(),
  action: z.string().min(1).max(100).optional(),
});
const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  /** An exact account id or part of an email address. */
  q: z.string().trim().max(254).optional(),
});
const idParams = z.object({ id: idParam });
const changeBody = z
  .object({
    status: z.enum(ACCOUNT_STATUSES as [AccountStatus, ...AccountStatus[]]).optional(),
    is_admin: z.boolean().optional(),
    clamp_output: z.boolean().optional(),
    /** The account's own rate and concurrency limits (docs/billing.md); null removes them (the tier's apply). */
    limits: subjectLimitsSchema.nullable().optional(),
    tier: accountSchemas.changeBody.shape.tier,
    monthly_budget_usd: accountSchemas.changeBody.shape.monthly_budget_usd,
    monthly_token_budget: accountSchemas.changeBody.shape.monthly_token_budget,
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, {
    message: "give status, is_admin, clamp_output, limits, tier, monthly_budget_usd or monthly_token_budget",
  });

/** A new person: an account without a password, and the set-password link to send them. */
const createBody = z
  .object({
    email,
    is_admin: z.boolean().optional(),
    tier: accountSchemas.changeBody.shape.tier,
  })
  .strict();

/** Every request schema of this file (OpenAPI is generated from these). */
export const adminRouteSchemas = { auditQuery, listQuery, changeBody, createBody, ledgerQuery: ledgerPageQueryParams, usageQuery: usageDaysQuery, params: idParams };

/** The audit log's actor of a dashboard administrator's change. */
export function dashboardActor(request: FastifyRequest): AuditActor {
  const me = request.dashboard.account;
  return { type: "dashboard", id: me.id, name: me.email, clientAddress: request.ip, requestId: request.id };
}

/** Administrator powers, reads included, need an active account: suspension takes them away too. */
export function requireAdmin(request: FastifyRequest): Account {
  const me = request.dashboard.account;
  if (!me.isAdmin) throw new GatewayError("forbidden", "Only administrators may use the admin routes.");
  requireActive(me);
  return me;
}

export function registerAdminRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get("/admin/accounts", async (request) => {
    requireAdmin(request);
    const { limit, offset, q } = parseWith(listQuery, request.query, "query");
    if (q) {
      const found = await searchAccounts(ctx.store.db, { limit, search: q });
      return { data: found.map(adminAccountView), total: found.length };
    }
    const [accounts, total] = await Promise.all([ctx.store.accounts.list({ limit, offset }), ctx.store.accounts.count()]);
    return { data: accounts.map(adminAccountView), total };
  });

  // A new person: the account (no password, no balance) and a set-password link shown once, to send them.
  app.post("/admin/accounts", async (request, reply) => {
    requireAdmin(request);
    const body = parseWith(createBody, request.body);
    const { config } = request.snapshot;
    const tier = body.tier ?? config.defaultTier;
    if (!config.tiers.has(tier)) throw new GatewayError("invalid_request", `tier: unknown tier "${tier}" (configured: ${[...config.tiers.keys()].join(", ")})`, { param: "tier" });
    const { account, issued } = await ctx.store.audited(dashboardActor(request), (tx) =>
      createPerson(tx, { email: body.email, tier, isAdmin: body.is_admin === true }, config.passwordLinkTtlMs),
    );
    reply.code(201);
    return { account: adminAccountView(account), password_link: passwordLinkView(issued, requestBaseUrl(request)) };
  });

  // A set-password link for another account's person (a reset when it has a password: the old one
  // works until the link is used). Your own password is changed on the Account page instead.
  app.post("/admin/accounts/:id/password-link", async (request, reply) => {
    const me = requireAdmin(request);
    const { id } = parseWith(idParams, request.params, "id");
    if (id === me.id) throw new GatewayError("invalid_request", "Change your own password on the Account page (it needs your current password).", { param: "id" });
    await accountOr404(ctx, id);
    const issued = await ctx.store.audited(dashboardActor(request), (tx) => issuePasswordLink(tx, id, request.snapshot.config.passwordLinkTtlMs));
    reply.code(201);
    return passwordLinkView(issued, requestBaseUrl(request));
  });

  app.get("/admin/accounts/:id", async (request) => {
    requireAdmin(request);
    const { id } = parseWith(idParams, request.params, "id");
    // The configured tiers, for the page's tier choice.
    return { account: adminAccountView(await accountOr404(ctx, id)), tiers: [...request.snapshot.config.tiers.keys()].sort() };
  });

  // A credit or debit with its required reason: the ledger row (its note) and the audit row in one transaction.
  for (const kind of ["credit", "debit"] as const) {
    app.post(`/admin/accounts/:id/${kind}s`, async (request) => {
      requireAdmin(request);
      const { id } = parseWith(idParams, request.params, "id");
      const body = parseWith(accountSchemas.balanceBody, request.body);
      if (body.amount_usd === 0n) throw new GatewayError("invalid_request", "amount_usd: must be more than 0", { param: "amount_usd" });
      await accountOr404(ctx, id);
      const account = await ctx.store.audited(dashboardActor(request), (tx) => adjustBalance(tx, id, kind === "credit" ? body.amount_usd : -body.amount_usd, body.reason));
      return { object: kind, account: adminAccountView(account), reason: body.reason };
    });
  }

  app.get("/admin/accounts/:id/ledger", async (request) => {
    requireAdmin(request);
    const { id } = parseWith(idParams, request.params, "id");
    const query = parseWith(ledgerPageQueryParams, request.query, "query");
    await accountOr404(ctx, id);
    const rows = await ledgerPage(ctx.store, id, { limit: query.limit + 1, ...(query.before !== undefined && { before: BigInt(query.before) }) });
    const page = rows.slice(0, query.limit);
    return { data: await ledgerRowsView(ctx.store.db, page), next_before: rows.length > query.limit ? page[page.length - 1]!.id.toString() : null };
  });

  // The account's own provider keys: the key is write-only (only its last four characters come back).
  app.get("/admin/accounts/:id/provider-keys", async (request) => {
    requireAdmin(request);
    const { id } = parseWith(idParams, request.params, "id");
    await accountOr404(ctx, id);
    return { data: (await ctx.store.upstreamKeys.list(id)).map(providerKeyView), providers: [...request.snapshot.config.providers.keys()].sort() };
  });

  app.post("/admin/accounts/:id/provider-keys", async (request, reply) => {
    requireAdmin(request);
    const { id } = parseWith(idParams, request.params, "id");
    const body = parseWith(providerKeySchemas.addBody, request.body);
    if (!request.snapshot.config.providers.has(body.provider)) throw new GatewayError("invalid_request", `provider: unknown provider "${body.provider}"`, { param: "provider" });
    await accountOr404(ctx, id);
    const info = await ctx.store.audited(dashboardActor(request), (tx) => addProviderKey(tx, { accountId: id, provider: body.provider, key: body.key, label: body.label ?? "" }));
    invalidateOwnKeys(request.snapshot, ctx, id);
    reply.code(201);
    return { provider_key: providerKeyView(info) };
  });

  app.delete("/admin/accounts/:id/provider-keys/:keyId", async (request) => {
    requireAdmin(request);
    const { id, keyId } = parseWith(providerKeySchemas.keyParams, request.params, "id");
    await ctx.store.audited(dashboardActor(request), (tx) => removeProviderKey(tx, keyId, id));
    invalidateOwnKeys(request.snapshot, ctx, id);
    return { id: keyId, deleted: true };
  });

  // Usage across all accounts, by account, model and provider.
  app.get("/admin/usage", async (request) => {
    requireAdmin(request);
    const { days } = parseWith(usageDaysQuery, request.query, "query");
    return usageAcrossAccounts(ctx.store, days);
  });

  // The same statuses as `gateway admin upstreams status --json`: fingerprints, never keys.
  app.get("/admin/upstreams", async (request) => {
    requireAdmin(request);
    return upstreamStatuses(ctx.store, request.snapshot.config);
  });

  // The audit log (docs/operations.md, "Audit log"), newest first; `before` continues a page.
  app.get("/admin/audit", async (request) => {
    requireAdmin(request);
    const q = parseWith(auditQuery, request.query, "query");
    const entries = await ctx.store.audit.list({
      limit: q.limit,
      ...(q.before !== undefined && { beforeId: BigInt(q.before) }),
      ...(q.target_id !== undefined && { targetId: q.target_id }),
      ...(q.actor_id !== undefined && { actorId: q.actor_id }),
      ...(q.action !== undefined && { action: q.action }),
    });
    return { data: entries.map(auditView) };
  });

  app.patch("/admin/accounts/:id", async (request) => {
    const me = requireAdmin(request);
    const { id } = parseWith(adminRouteSchemas.params, request.params, "id");
    const body = parseWith(changeBody, request.body);
    // An administrator who suspends or demotes themselves could lock everyone out.
    if (id === me.id && (body.status !== undefined || body.is_admin !== undefined)) {
      throw new GatewayError("invalid_request", "You cannot change your own account's status or admin flag.", { param: "id" });
    }
    const current = await accountOr404(ctx, id);
    if (body.tier !== undefined && !request.snapshot.config.tiers.has(body.tier)) {
      throw new GatewayError("invalid_request", `tier: unknown tier "${body.tier}" (configured: ${[...request.snapshot.config.tiers.keys()].join(", ")})`, { param: "tier" });
    }
    const changes: AccountChanges = {
      ...(body.status !== undefined && body.status !== current.status && { status: body.status }),
      ...(body.is_admin !== undefined && body.is_admin !== current.isAdmin && { isAdmin: body.is_admin }),
      ...(body.clamp_output !== undefined && body.clamp_output !== current.clampOutput && { clampOutput: body.clamp_output }),
      ...(body.limits !== undefined && { limits: body.limits }),
      ...(body.tier !== undefined && body.tier !== current.tier && { tier: body.tier }),
      ...(body.monthly_budget_usd !== undefined && { monthlyBudget: body.monthly_budget_usd }),
      ...(body.monthly_token_budget !== undefined && { monthlyTokenBudget: body.monthly_token_budget }),
    };
    const account = Object.keys(changes).length === 0 ? current : await ctx.store.audited(dashboardActor(request), (tx) => updateAccount(tx, id, changes));
    ctx.pipeline.authCache.invalidateAccount(id);
    return { account: adminAccountView(account) };
  });
}
