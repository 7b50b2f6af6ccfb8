// GET /v1/requests/{request_id}: one request's ledger row, as its key's account sees it. The row is
// read whole (selectAll), so a ledger column added later only needs a line in requestRecordJson.
import type { Selectable } from "kysely";
import { z } from "zod";
import { addSums, emptyTotals, usageTotalsJson } from "../../billing/usage-report.js";
import { formatUsd } from "../../core/money.js";
import { formatPriceFactor } from "../../core/price-factor.js";
import { GatewayError, invalidRequest } from "../../errors/catalogue.js";
import type { LedgerTable } from "../../store/tables.js";

/** Request ids are `req_` and 32 hex digits; the bound leaves room for other ids the ledger records. */
const REQUEST_ID = /^[A-Za-z0-9_-]{1,100}$/;

/** The route's one parameter, as checked (and described in the OpenAPI document). */
export const requestIdParamSchema = z.object({ request_id: z.string().regex(REQUEST_ID) });

export function readRequestIdParam(value: unknown): string {
  const result = requestIdParamSchema.safeParse({ request_id: value });
  if (!result.success) throw invalidRequest("request_id", "request_id must be 1 to 100 letters, digits, '_' or '-'.");
  return result.data.request_id;
}

/** The same answer for an unknown id and for another account's: nothing says which it was. */
export function requestNotFound(requestId: string): GatewayError {
  return new GatewayError("not_found", `No request ${requestId}.`, { param: "request_id" });
}

/**
 * A usage row as the API shows it. Not the provider: which upstream served is the operator's business
 * (a routing group's deployment name is public and is shown). Counts are bigint in the database and
 * far below 2^53, so they are plain JSON numbers.
 */
export function requestRecordJson(row: Selectable<LedgerTable>) {
  // The per-dimension counts and costs and the cache summary, exactly as the usage reports show a total.
  const totals = emptyTotals();
  addSums(totals, { ...row, requests: 1n });
  const { dimensions, cache } = usageTotalsJson(totals);
  return {
    object: "request" as const,
    id: row.request_id,
    created_at: new Date(Number(row.created_at)).toISOString(),
    model: row.model,
    route: row.route,
    deployment: row.deployment,
    input_tokens: Number(row.input_tokens),
    cached_tokens: Number(row.cached_tokens),
    output_tokens: Number(row.output_tokens),
    reasoning_tokens: Number(row.reasoning_tokens),
    cost_usd: formatUsd(row.cost_nano),
    estimated: row.estimated === 1n,
    // Null for a row settled before migration 0011, which did not count them.
    attempts: row.attempts === null ? null : Number(row.attempts),
    // The account's tier's price factor the request was charged at (migration 0026); null: list prices.
    price_factor: row.price_factor_ppm === null ? null : formatPriceFactor(Number(row.price_factor_ppm)),
    dimensions,
    cache,
  };
}
