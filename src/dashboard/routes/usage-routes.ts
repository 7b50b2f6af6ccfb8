// The signed-in account's usage: balance and budget, spend and tokens by day (the chart), by key and
// by model; the ledger page by page, and the whole ledger (or a window of it) as CSV.
import { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { RouteContext } from "../../http/route-context.js";
import { formatUsd } from "../../core/money.js";
import { csvCell, ledgerCsvLines } from "../ledger-csv.js";
import { DAY_MS, ledgerPage, ledgerRowsView, usageSummary } from "../../admin/usage-queries.js";
import { parseWith } from "../../admin/validate.js";
import { ledgerPageQueryParams, usageDaysQuery } from "../../admin/routes/route.js";

const csvQuery = z.object({ days: z.coerce.number().int().min(1).max(3660).optional() });

/** Every request schema of this file (OpenAPI is generated from these). */
export const usageRouteSchemas = { daysQuery: usageDaysQuery, ledgerQuery: ledgerPageQueryParams, csvQuery };

export { csvCell };

export function registerUsageRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get("/usage", async (request) => {
    const { days } = parseWith(usageDaysQuery, request.query, "query");
    const accountId = request.dashboard.account.id;
    const [profile, summary] = await Promise.all([ctx.billing.accountProfile(accountId), usageSummary(ctx.store.db, { accountId }, days)]);
    return {
      balance: {
        balance_usd: formatUsd(profile.balance),
        held_usd: formatUsd(profile.held),
        total_spent_usd: formatUsd(profile.totalSpent),
        monthly_budget_usd: profile.monthlyBudget === null ? null : formatUsd(profile.monthlyBudget),
        monthly_token_budget: profile.monthlyTokenBudget,
        month: profile.month,
        month_spent_usd: formatUsd(profile.monthSpent),
        month_tokens: profile.monthTokens,
        month_requests: profile.monthRequests,
        month_resets_at: profile.monthResetsAt,
      },
      ...summary,
    };
  });

  app.get("/ledger", async (request) => {
    const query = parseWith(ledgerPageQueryParams, request.query, "query");
    const rows = await ledgerPage(ctx.store, request.dashboard.account.id, {
      limit: query.limit + 1,
      ...(query.before !== undefined && { before: BigInt(query.before) }),
    });
    const page = rows.slice(0, query.limit);
    return { data: await ledgerRowsView(ctx.store.db, page), next_before: rows.length > query.limit ? page[page.length - 1]!.id.toString() : null };
  });

  app.get("/ledger.csv", async (request, reply) => {
    const { days } = parseWith(csvQuery, request.query, "query");
    const accountId = request.dashboard.account.id;
    const since = days === undefined ? undefined : BigInt(Date.now() - days * DAY_MS);
    const stamp = new Date().toISOString().slice(0, 10);
    return reply
      .header("content-type", "text/csv; charset=utf-8")
      .header("content-disposition", `attachment; filename="ledger-${stamp}.csv"`)
      .send(Readable.from(ledgerCsvLines(ctx.store, accountId, since)));
  });
}
