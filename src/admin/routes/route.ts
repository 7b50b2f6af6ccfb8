// One /admin/v1 route: its method, path, the scope it needs, and its handler. The route table
// (src/admin/index.ts) is what the server registers and what the tests walk to check every scope.
import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { MAX_BALANCE, parseUsd, type Nano } from "../../core/money.js";
import { GatewayError } from "../../errors/catalogue.js";
import type { RouteContext } from "../../http/route-context.js";
import type { Account } from "../../store/accounts-store.js";
import type { AdminScope } from "../scopes.js";

export interface AdminRoute {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** Relative to /admin/v1. */
  url: string;
  scope: AdminScope;
  /** Top-level body fields holding an uploaded file's text, where tabs and line breaks are allowed (src/core/stored-text.ts). */
  fileTextFields?: readonly string[];
  handler(request: FastifyRequest, reply: FastifyReply, ctx: RouteContext): Promise<unknown>;
}

/** A USD amount ("12.50" or 12.5) from 0 up to `max`, as exact nano-USD. */
export function usd(max: Nano = MAX_BALANCE) {
  return z.union([z.string().max(40), z.number()]).transform((value, ctx): Nano => {
    const nano = parseUsd(value);
    if (nano === null || nano < 0n || nano > max) {
      ctx.addIssue({ code: "custom", message: `must be a decimal amount in USD from 0 to ${Number(max / 1_000_000_000n)}, e.g. "10.00"` });
      return z.NEVER;
    }
    return nano;
  });
}

export const id = z.string().min(1).max(100);
export const tokenCount = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const pageLimit = z.coerce.number().int().min(1).max(500).default(100);
export const cursor = z.string().min(1).max(400).optional();

/** A usage summary's window: the last `days` UTC days, 30 unless given (usageSummary). */
export const usageDaysQuery = z.object({ days: z.coerce.number().int().min(1).max(366).default(30) });

/** A page of a ledger, newest first: `limit` rows before the row id `before` (ledgerPage). */
export const ledgerPageQueryParams = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  before: z
    .string()
    .regex(/^\d{1,19}$/, "must be a ledger row id")
    .optional(),
});

/** The account, or 404 not_found naming it (the admin API and the dashboard's administration). */
export async function accountOr404(ctx: RouteContext, accountId: string): Promise<Account> {
  const account = await ctx.store.accounts.get(accountId);
  if (!account) throw new GatewayError("not_found", `No account ${accountId}.`);
  return account;
}
