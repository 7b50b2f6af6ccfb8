// GET /v1/me (the account behind the key, the key's policy, and the key's usage this month), GET /v1/usage (the key's
// own usage, by model and by day; per pricing dimension and caching, usage-report.ts) and
// GET /v1/requests/{request_id} (one request of the account). Money as decimal strings; times as
// ISO 8601 (UTC).
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { checkRequestBody } from "../../formats/fields.js";
import type { RouteContext } from "../route-context.js";
import { formatUsd } from "../../core/money.js";
import { usageTotalsJson as totalsJson } from "../../billing/usage-report.js";
import { invalidRequest } from "../../errors/catalogue.js";
import { effectiveStatus, keyPolicyJson } from "../../accounts/key-policy.js";
import { authenticate } from "../../pipeline/authenticate.js";
import { limitSubjectsOf, NO_TIER_LIMITS, subjectLimitsJson } from "../../core/traffic-limits.js";
import { trafficUse } from "../../billing/traffic-usage.js";
import { budgetUseJson } from "../../billing/budget-view.js";
import { appliedBudgets, type TagBudgetUse } from "../../billing/applied-budgets.js";
import { tagTexts } from "../../core/request-tags.js";
import { tagUsage } from "../../billing/tag-usage.js";
import type { ApiKey } from "../../store/keys-store.js";
import { nextMonthStart } from "../../billing/admission.js";
import { readRequestIdParam, requestNotFound, requestRecordJson } from "./request-record.js";

/** Accepts an ISO date or date-time, or epoch seconds; names the parameter when it is neither. */
export function parseTimeParam(name: string, value: unknown): number | undefined {
  if (value === undefined || value === "") return undefined;
  if (typeof value !== "string") throw invalidRequest(name, `${name} must be a date (YYYY-MM-DD), an ISO date-time or epoch seconds.`);
  const ms = /^\d{9,11}$/.test(value) ? Number(value) * 1000 : Date.parse(value);
  if (Number.isNaN(ms)) throw invalidRequest(name, `${name} must be a date (YYYY-MM-DD), an ISO date-time or epoch seconds.`);
  return ms;
}

const TIME_PARAM = "A date (YYYY-MM-DD), an ISO date-time or epoch seconds";

/** GET /v1/usage's query, as checked (and described in the OpenAPI document); parseTimeParam reads each value. */
export const usageQuerySchema = z.object({
  start: z.string().max(64).optional().describe(TIME_PARAM),
  end: z.string().max(64).optional().describe(TIME_PARAM),
});

/** /v1/me's workspace and its two budgets' use: null for a key without one; read afresh, like the key. */
async function workspaceOf(ctx: RouteContext, workspaceId: string | null, accountId: string, month: string) {
  if (workspaceId === null) return null;
  const policy = await ctx.store.workspaceBudgets.policy(workspaceId);
  if (policy === null) return null;
  const use = await ctx.store.workspaceBudgets.usage(policy, [accountId], month);
  const member = use.members.get(accountId)!;
  const resetsAt = nextMonthStart(month);
  return {
    use: { budget: use.workspace, member, resetsAt },
    json: {
      id: policy.id,
      name: policy.name,
      allowed_models: policy.allowedModels,
      month,
      resets_at: resetsAt,
      budget: budgetUseJson(use.workspace),
      member_budget: budgetUseJson(member),
    },
  };
}

/** The budgets on the key's default tags (gateway-wide and the account's), with this month's use; read afresh. */
async function tagBudgetsOf(ctx: RouteContext, key: ApiKey, month: string): Promise<TagBudgetUse[]> {
  const tags = key.defaultTags === null ? [] : tagTexts(key.defaultTags);
  if (tags.length === 0) return [];
  const budgets = (await ctx.store.tagBudgets.list()).filter((b) => tags.includes(b.tag) && (b.accountId === null || b.accountId === key.accountId));
  const uses = await ctx.store.tagBudgets.usage(budgets, month);
  return budgets.map((b, i) => ({ tag: b.tag, use: uses[i]!, resetsAt: nextMonthStart(month) }));
}

export function registerAccountRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const onRequest = async (request: FastifyRequest) => {
    await authenticate(request, ctx.pipeline.authCache, "exact");
  };

  app.get("/v1/me", { onRequest }, async (request) => {
    const p = await ctx.billing.accountProfile(request.principal.account.id);
    // Read afresh: the cached key's period counters would lag behind settlements.
    const key = (await ctx.store.keys.get(request.principal.key.id)) ?? request.principal.key;
    const now = ctx.pipeline.authCache.now();
    // This key's usage in the current UTC month: per dimension, caching included, in total and by model.
    const usage = await ctx.billing.keyUsage(key.id, { start: Date.parse(`${p.month}-01T00:00:00Z`) });
    const workspace = await workspaceOf(ctx, key.workspaceId, p.accountId, p.month);
    return {
      object: "account",
      id: p.accountId,
      email: p.email,
      status: p.status,
      tier: p.tier,
      default_model: p.defaultModel,
      balance_usd: formatUsd(p.balance),
      held_usd: formatUsd(p.held),
      available_usd: formatUsd(p.balance > p.held ? p.balance - p.held : 0n),
      total_spent_usd: formatUsd(p.totalSpent),
      monthly_budget: {
        usd: p.monthlyBudget === null ? null : formatUsd(p.monthlyBudget),
        tokens: p.monthlyTokenBudget,
        month: p.month,
        spent_usd: formatUsd(p.monthSpent),
        tokens_used: p.monthTokens,
        requests: p.monthRequests,
        resets_at: p.monthResetsAt,
      },
      key: {
        id: key.id,
        name: key.name,
        prefix: key.prefix,
        status: key.status,
        effective_status: effectiveStatus(key, now),
        clamp_output: key.clampOutput,
        // The key's policy (ADR 0017): allowed models and networks, expiry, periodic budget and its use.
        policy: keyPolicyJson(key, now),
      },
      // The rate and concurrency limits (docs/billing.md): what the key and the account set themselves,
      // and every limit that applies to this key with the current window's use.
      limits: {
        key: subjectLimitsJson(key.limits),
        account: subjectLimitsJson(request.principal.account.limits),
        applied: await trafficUse(ctx.store.db, request.snapshot.config.tierLimits.get(p.tier) ?? NO_TIER_LIMITS, limitSubjectsOf(request.principal), now),
      },
      // The workspace the key is tagged with: its models, its budget and the caller's member budget, with what is left (ADR 0037).
      workspace: workspace?.json ?? null,
      // Every budget with a limit that applies to this key, in admission's order, with what is left of each.
      budgets: appliedBudgets(p, key, workspace?.use ?? null, now, await tagBudgetsOf(ctx, key, p.month)),
      // Whether a request this key sends may be clamped: the account's and the key's setting both on.
      clamp_output: request.principal.account.clampOutput && key.clampOutput,
      key_usage: {
        month: p.month,
        ...totalsJson(usage.totals),
        by_model: usage.byModel.map((m) => ({ model: m.model, ...totalsJson(m) })),
      },
    };
  });

  app.get("/v1/usage", { onRequest }, async (request) => {
    const query = checkRequestBody(usageQuerySchema, request.query);
    const start = parseTimeParam("start", query.start);
    const end = parseTimeParam("end", query.end);
    if (start !== undefined && end !== undefined && end <= start) throw invalidRequest("end", "end must be after start.");
    const usage = await ctx.billing.keyUsage(request.principal.key.id, { start, end });
    return {
      object: "usage",
      key_id: usage.keyId,
      start: new Date(usage.start).toISOString(),
      end: new Date(usage.end).toISOString(),
      totals: totalsJson(usage.totals),
      by_model: usage.byModel.map((m) => ({ model: m.model, ...totalsJson(m) })),
      by_day: usage.byDay.map((d) => ({ day: d.day, ...totalsJson(d) })),
      // Spend per tag of the key's requests (its default tags and the x-gateway-tags header's).
      by_tag: await tagUsage(ctx.store.db, { keyId: usage.keyId }, usage.start, usage.end),
    };
  });

  // Any key of the account sees the account's requests (as the dashboard's ledger does), not only its own.
  // A wildcard rather than :request_id: Fastify answers a parameter over 100 characters itself, with
  // a 414 outside the error catalogue; the wildcard hands every id to readRequestIdParam.
  app.get<{ Params: { "*": string } }>("/v1/requests/*", { onRequest }, async (request) => {
    const requestId = readRequestIdParam(request.params["*"]);
    const row = await ctx.store.ledger.usageRow(request.principal.account.id, requestId);
    if (!row) throw requestNotFound(requestId);
    return requestRecordJson(row);
  });
}
