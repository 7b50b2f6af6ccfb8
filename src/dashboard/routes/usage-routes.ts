// The signed-in account's usage: balance and budget, spend and tokens by day (the chart), by key and
// by model; the ledger page by page, and the whole ledger (or a window of it) as CSV.
import { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { RouteContext } from "../../http/route-context.js";
import { formatUsd } from "../../core/money.js";
import { DAY_MS, LEDGER_CSV_COLUMNS, ledgerPage, ledgerRowView, usageSummary } from "../usage-queries.js";
import { parseWith } from "../validate.js";

const daysQuery = z.object({ days: z.coerce.number().int().min(1).max(366).default(30) });
const ledgerQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  before: z
    .string()
    .regex(/^\d{1,19}$/, "must be a ledger row id")
    .optional(),
});
const csvQuery = z.object({ days: z.coerce.number().int().min(1).max(3660).optional() });

/** Every request schema of this file (OpenAPI is generated from these). */
export const usageRouteSchemas = { daysQuery, ledgerQuery, csvQuery };

/** RFC 4180 quoting, and a leading quote on text a spreadsheet would run as a formula. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  let text = String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function registerUsageRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get("/usage", async (request) => {
    const { days } = parseWith(daysQuery, request.query, "query");
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
    const query = parseWith(ledgerQuery, request.query, "query");
    const rows = await ledgerPage(ctx.store.db, request.dashboard.account.id, {
      limit: query.limit + 1,
      ...(query.before !== undefined && { before: BigInt(query.before) }),
    });
    const page = rows.slice(0, query.limit);
    return { data: page.map(ledgerRowView), next_before: rows.length > query.limit ? page[page.length - 1]!.id.toString() : null };
  });

  app.get("/ledger.csv", async (request, reply) => {
    const { days } = parseWith(csvQuery, request.query, "query");
    const accountId = request.dashboard.account.id;
    const since = days === undefined ? undefined : BigInt(Date.now() - days * DAY_MS);
    const db = ctx.store.db;
    // Streamed page by page so that a large ledger never sits in memory at once.
    async function* lines(): AsyncGenerator<string> {
      yield `${LEDGER_CSV_COLUMNS.join(",")}\r\n`;
      let before: bigint | undefined;
      for (;;) {
        const rows = await ledgerPage(db, accountId, { limit: 1000, ...(before !== undefined && { before }), ...(since !== undefined && { since }) });
        if (rows.length === 0) return;
        yield rows
          .map((row) => {
            const v: Record<string, unknown> = ledgerRowView(row);
            return `${LEDGER_CSV_COLUMNS.map((c) => csvCell(v[c])).join(",")}\r\n`;
          })
          .join("");
        before = rows[rows.length - 1]!.id;
      }
    }
    const stamp = new Date().toISOString().slice(0, 10);
    return reply.header("content-type", "text/csv; charset=utf-8").header("content-disposition", `attachment; filename="ledger-${stamp}.csv"`).send(Readable.from(lines()));
  });
}
