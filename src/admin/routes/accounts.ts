// /admin/v1/accounts: create (optionally with a set-password link), list (cursor paging, search by email
// or id), get, change (status, tier, budgets, default model, clamping, rate and concurrency limits),
// credit and debit (a required reason; Idempotency-Key), and a set-password link for an account's person.
import { z } from "zod";
import { subjectLimitsSchema } from "../../core/traffic-limits.js";
import { MAX_BALANCE } from "../../core/money.js";
import { GatewayError } from "../../errors/catalogue.js";
import { email, parseWith } from "../validate.js";
import type { GatewayConfig } from "../../config/load.js";
import { searchAccounts } from "../../store/account-search.js";
import { ACCOUNT_STATUSES, type AccountStatus } from "../../store/accounts-store.js";
import { adminActor, requireScope } from "../auth.js";
import { idempotencyKeyOf, once, requestHash } from "../idempotency.js";
import { adjustBalance, createAccount, updateAccount, type AccountChanges } from "../operations.js";
import { adminAccountView, decodeCursor, encodeCursor } from "../views.js";
import { issuePasswordLink, passwordLinkView, requestBaseUrl } from "../password-links.js";
import { accountOr404, cursor, id, pageLimit, tokenCount, usd, type AdminRoute } from "./route.js";

const BUDGET_MAX = MAX_BALANCE * 1000n;
const status = z.enum(ACCOUNT_STATUSES as [AccountStatus, ...AccountStatus[]]);
const tier = z.string().min(1).max(100);
const defaultModel = z.string().min(1).max(200).nullable();

/** Every request schema of this file (OpenAPI is generated from these). */
export const accountSchemas = {
  params: z.object({ id }),
  listQuery: z.object({ limit: pageLimit, cursor, q: z.string().trim().min(1).max(254).optional() }),
  createBody: z
    .object({
      email,
      tier: tier.optional(),
      balance_usd: usd().optional(),
      monthly_budget_usd: usd(BUDGET_MAX).nullable().optional(),
      monthly_token_budget: tokenCount.nullable().optional(),
      default_model: defaultModel.optional(),
      clamp_output: z.boolean().optional(),
      /** true: the answer carries a set-password link for the new account's person (docs/operations.md). */
      password_link: z.boolean().optional(),
    })
    .strict(),
  changeBody: z
    .object({
      status: status.optional(),
      tier: tier.optional(),
      monthly_budget_usd: usd(BUDGET_MAX).nullable().optional(),
      monthly_token_budget: tokenCount.nullable().optional(),
      default_model: defaultModel.optional(),
      clamp_output: z.boolean().optional(),
      /** The account's own rate and concurrency limits (docs/billing.md); null removes them (the tier's apply). */
      limits: subjectLimitsSchema.nullable().optional(),
    })
    .strict()
    .refine((b) => Object.keys(b).length > 0, { message: "give at least one of status, tier, monthly_budget_usd, monthly_token_budget, default_model, clamp_output, limits" }),
  balanceBody: z.object({ amount_usd: usd(MAX_BALANCE), reason: z.string().trim().min(1).max(500) }).strict(),
};

function knownTier(config: GatewayConfig, name: string): string {
  if (!config.tiers.has(name)) throw new GatewayError("invalid_request", `tier: unknown tier "${name}" (configured: ${[...config.tiers.keys()].join(", ")})`, { param: "tier" });
  return name;
}

function balanceRoute(kind: "credit" | "debit"): AdminRoute {
  return {
    method: "POST",
    url: `/accounts/:id/${kind}s`,
    scope: "credits:write",
    async handler(request, reply, ctx) {
      const { id: accountId } = parseWith(accountSchemas.params, request.params, "id");
      const key = idempotencyKeyOf(request.headers);
      const body = parseWith(accountSchemas.balanceBody, request.body);
      if (body.amount_usd === 0n) throw new GatewayError("invalid_request", "amount_usd: must be more than 0", { param: "amount_usd" });
      const hash = requestHash("POST", `/admin/v1/accounts/${accountId}/${kind}s`, request.body);
      const result = await once(ctx.store, key, hash, async (claim, save) => {
        await accountOr404(ctx, accountId);
        return ctx.store.audited(adminActor(request), async (tx) => {
          await claim(tx.trx);
          const account = await adjustBalance(tx, accountId, kind === "credit" ? body.amount_usd : -body.amount_usd, body.reason);
          const response = { status: 200, body: { object: kind, account: adminAccountView(account), reason: body.reason } };
          await save(tx.trx, response.status, response.body);
          return response;
        });
      });
      if (result.replayed) reply.header("idempotent-replayed", "true");
      reply.code(result.status);
      return result.body;
    },
  };
}

export const accountRoutes: AdminRoute[] = [
  {
    method: "GET",
    url: "/accounts",
    scope: "accounts:read",
    async handler(request, _reply, ctx) {
      const query = parseWith(accountSchemas.listQuery, request.query, "query");
      const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, 2);
      if (after && !/^\d{1,16}$/.test(after[0]!)) throw new GatewayError("invalid_request", "cursor is not a cursor this API returned", { param: "cursor" });
      const accounts = await searchAccounts(ctx.store.db, {
        limit: query.limit + 1,
        ...(after && { after: { createdAt: BigInt(after[0]!), id: after[1]! } }),
        ...(query.q !== undefined && { search: query.q }),
      });
      const page = accounts.slice(0, query.limit);
      const last = page.at(-1);
      const more = accounts.length > query.limit && last !== undefined;
      return { object: "list", data: page.map(adminAccountView), has_more: more, next_cursor: more ? encodeCursor([String(last.createdAt), last.id]) : null };
    },
  },
  {
    method: "POST",
    url: "/accounts",
    scope: "accounts:write",
    async handler(request, reply, ctx) {
      const body = parseWith(accountSchemas.createBody, request.body);
      // An opening balance is money in: it takes the scope every credit takes.
      if (body.balance_usd !== undefined && body.balance_usd > 0n) requireScope(request, "credits:write");
      const { config } = request.snapshot;
      const { account, issued } = await ctx.store.audited(adminActor(request), async (tx) => {
        const created = await createAccount(tx, {
          email: body.email,
          tier: knownTier(config, body.tier ?? config.defaultTier),
          balance: body.balance_usd ?? 0n,
          monthlyBudget: body.monthly_budget_usd ?? null,
          monthlyTokenBudget: body.monthly_token_budget ?? null,
          defaultModel: body.default_model ?? null,
          ...(body.clamp_output !== undefined && { clampOutput: body.clamp_output }),
        });
        // A new account has no password and no sessions: its first link hands nothing over that accounts:write cannot.
        return { account: created, issued: body.password_link === true ? await issuePasswordLink(tx, created.id, config.passwordLinkTtlMs) : null };
      });
      reply.code(201);
      return { account: adminAccountView(account), ...(issued && { password_link: passwordLinkView(issued, requestBaseUrl(request)) }) };
    },
  },
  {
    method: "GET",
    url: "/accounts/:id",
    scope: "accounts:read",
    async handler(request, _reply, ctx) {
      const { id: accountId } = parseWith(accountSchemas.params, request.params, "id");
      return { account: adminAccountView(await accountOr404(ctx, accountId)) };
    },
  },
  {
    method: "PATCH",
    url: "/accounts/:id",
    scope: "accounts:write",
    async handler(request, _reply, ctx) {
      const { id: accountId } = parseWith(accountSchemas.params, request.params, "id");
      const body = parseWith(accountSchemas.changeBody, request.body);
      const changes: AccountChanges = {
        ...(body.status !== undefined && { status: body.status }),
        ...(body.tier !== undefined && { tier: knownTier(request.snapshot.config, body.tier) }),
        ...(body.monthly_budget_usd !== undefined && { monthlyBudget: body.monthly_budget_usd }),
        ...(body.monthly_token_budget !== undefined && { monthlyTokenBudget: body.monthly_token_budget }),
        ...(body.default_model !== undefined && { defaultModel: body.default_model }),
        ...(body.clamp_output !== undefined && { clampOutput: body.clamp_output }),
        ...(body.limits !== undefined && { limits: body.limits }),
      };
      await accountOr404(ctx, accountId);
      const account = await ctx.store.audited(adminActor(request), (tx) => updateAccount(tx, accountId, changes));
      // Status, tier, budgets and limits decide admission: this process drops its cached copy at once, others via auth_events.
      ctx.pipeline.authCache.invalidateAccount(accountId);
      return { account: adminAccountView(account) };
    },
  },
  balanceRoute("credit"),
  balanceRoute("debit"),
  {
    // A set-password link for the account's person: the first password, or a new one (the old one
    // works until the link is used). Never for an administrator: a token must not become one.
    method: "POST",
    url: "/accounts/:id/password-link",
    scope: "passwords:write",
    async handler(request, reply, ctx) {
      const { id: accountId } = parseWith(accountSchemas.params, request.params, "id");
      const account = await accountOr404(ctx, accountId);
      if (account.isAdmin) {
        throw new GatewayError(
          "forbidden",
          "An administrator's password is reset by another administrator on the dashboard or with gateway admin users reset-password, never with an admin token.",
          { code: "cannot_reset_administrator" },
        );
      }
      const issued = await ctx.store.audited(adminActor(request), (tx) => issuePasswordLink(tx, accountId, request.snapshot.config.passwordLinkTtlMs));
      reply.code(201);
      return passwordLinkView(issued, requestBaseUrl(request));
    },
  },
];
