// The request log (docs/dashboard.md, "Requests"; ADR 0023): the signed-in account's requests, and
// every account's (with the requests no key was attributed to) for administrators, newest first,
// filtered, page by page with a cursor, or all of it as CSV streamed page by page.
import { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply } from "fastify";
import { z } from "zod";
import { formatUsd } from "../../core/money.js";
import type { RouteContext } from "../../http/route-context.js";
import { requestLogPage, type RequestLogCursor, type RequestLogFilter, type RequestLogRow, type StatusFilter } from "../../store/request-log-store.js";
import { idParam, parseWith } from "../../admin/validate.js";
import { REQUEST_COUNT_COLUMNS } from "../../admin/usage-queries.js";
import { requireAdmin } from "./admin-routes.js";
import { csvCell } from "./usage-routes.js";

/** A point in time: epoch ms, or an ISO 8601 date-time (as the page's date fields send it). */
const instant = z
  .string()
  .max(40)
  .transform((text, ctx): number => {
    const ms = /^\d{1,15}$/.test(text) ? Number(text) : Date.parse(text);
    if (!Number.isFinite(ms)) {
      ctx.addIssue({ code: "custom", message: "must be an ISO 8601 date-time or epoch milliseconds" });
      return z.NEVER;
    }
    return ms;
  });

const statusFilter = z
  .string()
  .regex(/^([1-5]\d\d|[1-5]xx|error)$/, 'must be a status (e.g. 429), a class ("4xx") or "error"')
  .transform((text): StatusFilter => {
    if (text === "error") return { from: 400, below: 600 };
    if (text.endsWith("xx")) {
      const from = Number(text[0]) * 100;
      return { from, below: from + 100 };
    }
    return { exact: Number(text) };
  });

/** The cursor is the last row's created_at and id: "<epoch ms>.<id>"; 18 digits each stay inside a signed 64-bit column. */
const cursorParam = z
  .string()
  .regex(/^\d{1,18}\.\d{1,18}$/, "must be a next_cursor from a previous page")
  .transform((text): RequestLogCursor => {
    const [createdAt, id] = text.split(".");
    return { createdAt: BigInt(createdAt!), id: BigInt(id!) };
  });

const filters = {
  key_id: idParam.optional(),
  model: z.string().min(1).max(200).optional(),
  status: statusFilter.optional(),
  request_id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, "must be a request id")
    .optional(),
  since: instant.optional(),
  until: instant.optional(),
};
const pageQuery = z.object({ ...filters, limit: z.coerce.number().int().min(1).max(200).default(50), cursor: cursorParam.optional() });
const adminPageQuery = pageQuery.extend({ account_id: idParam.optional() });
const csvQuery = z.object(filters);
const adminCsvQuery = csvQuery.extend({ account_id: idParam.optional() });

/** Every request schema of this file (OpenAPI is generated from these). */
export const requestLogRouteSchemas = { pageQuery, adminPageQuery, csvQuery, adminCsvQuery };

type FilterQuery = z.infer<typeof csvQuery> & { account_id?: string | undefined };

function filterOf(q: FilterQuery, accountId: string | undefined): RequestLogFilter {
  return {
    ...(accountId !== undefined && { accountId }),
    ...(q.key_id !== undefined && { keyId: q.key_id }),
    ...(q.model !== undefined && { model: q.model }),
    ...(q.status !== undefined && { status: q.status }),
    ...(q.request_id !== undefined && { requestId: q.request_id }),
    ...(q.since !== undefined && { since: q.since }),
    ...(q.until !== undefined && { until: q.until }),
  };
}

const count = (value: bigint | null): number | null => (value === null ? null : Number(value));
const micros = (value: bigint | null): number | null => (value === null ? null : Number(value) / 1000);

/** A row as a customer sees it: not the provider (which upstream served is the operator's business). */
export function requestLogView(row: RequestLogRow) {
  return {
    request_id: row.request_id,
    created_at: new Date(Number(row.created_at)).toISOString(),
    key_id: row.key_id,
    key_name: row.key_name,
    key_prefix: row.key_prefix,
    method: row.method,
    route: row.route,
    model: row.model,
    deployment: row.deployment,
    status: Number(row.status),
    error_type: row.error_type,
    error_message: row.error_message,
    requested_model: row.requested_model,
    latency_ms: micros(row.latency_us),
    first_byte_ms: micros(row.first_byte_us),
    attempts: count(row.attempts),
    input_tokens: count(row.input_tokens),
    cached_tokens: count(row.cached_tokens),
    output_tokens: count(row.output_tokens),
    reasoning_tokens: count(row.reasoning_tokens),
    cost_usd: row.cost_nano === null ? null : formatUsd(row.cost_nano),
    estimated: row.estimated === null ? null : row.estimated === 1n,
    guardrails: row.guardrails,
  };
}

/** An administrator's row: also the account and the provider. */
export function adminRequestLogView(row: RequestLogRow) {
  return { ...requestLogView(row), account_id: row.account_id, provider: row.provider };
}

type View = (row: RequestLogRow) => Record<string, unknown>;

/** The CSV's columns, in the order of the page's table. */
const CUSTOMER_COLUMNS = [
  "created_at",
  "request_id",
  "key_id",
  "key_name",
  "method",
  "route",
  "requested_model",
  "model",
  "deployment",
  "status",
  "error_type",
  "error_message",
  "latency_ms",
  "first_byte_ms",
  "attempts",
  ...REQUEST_COUNT_COLUMNS,
] as const;
/** An administrator's CSV: also the account and the provider. */
const ADMIN_COLUMNS = [...CUSTOMER_COLUMNS.slice(0, 2), "account_id", ...CUSTOMER_COLUMNS.slice(2), "provider"] as const;

const CSV_PAGE = 1_000;

function nextCursor(rows: RequestLogRow[]): string {
  const last = rows[rows.length - 1]!;
  return `${last.created_at}.${last.id}`;
}

export function registerRequestLogRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const db = ctx.store.db;

  async function page(accountId: string | undefined, q: z.infer<typeof adminPageQuery>, view: View) {
    const rows = await requestLogPage(db, filterOf(q, accountId), q.limit + 1, q.cursor);
    const data = rows.slice(0, q.limit);
    return { data: data.map(view), next_cursor: rows.length > q.limit ? nextCursor(data) : null };
  }

  /** Streamed a page at a time: a large log never sits in memory (nor does the client wait for all of it). */
  function csv(reply: FastifyReply, filter: RequestLogFilter, view: View, columns: readonly string[], name: string) {
    async function* lines(): AsyncGenerator<string> {
      yield `${columns.join(",")}\r\n`;
      let cursor: RequestLogCursor | undefined;
      for (;;) {
        const rows = await requestLogPage(db, filter, CSV_PAGE, cursor);
        if (rows.length === 0) return;
        yield rows
          .map((row) => {
            const v = view(row);
            return `${columns.map((c) => csvCell(v[c])).join(",")}\r\n`;
          })
          .join("");
        if (rows.length < CSV_PAGE) return;
        const last = rows[rows.length - 1]!;
        cursor = { createdAt: last.created_at, id: last.id };
      }
    }
    const stamp = new Date().toISOString().slice(0, 10);
    return reply.header("content-type", "text/csv; charset=utf-8").header("content-disposition", `attachment; filename="${name}-${stamp}.csv"`).send(Readable.from(lines()));
  }

  app.get("/requests", async (request) => {
    const q = parseWith(pageQuery, request.query, "query");
    return page(request.dashboard.account.id, q, requestLogView);
  });

  app.get("/requests.csv", async (request, reply) => {
    const q = parseWith(csvQuery, request.query, "query");
    return csv(reply, filterOf(q, request.dashboard.account.id), requestLogView, CUSTOMER_COLUMNS, "requests");
  });

  // Administrators: every account, and the requests no key was attributed to (account_id empty).
  app.get("/admin/requests", async (request) => {
    requireAdmin(request);
    const q = parseWith(adminPageQuery, request.query, "query");
    return page(q.account_id, q, adminRequestLogView);
  });

  app.get("/admin/requests.csv", async (request, reply) => {
    requireAdmin(request);
    const q = parseWith(adminCsvQuery, request.query, "query");
    return csv(reply, filterOf(q, q.account_id), adminRequestLogView, ADMIN_COLUMNS, "requests-all");
  });
}
