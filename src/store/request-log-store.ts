// The request log's table (migration 0015): batched inserts, filtered keyset pages, pruning by time.
// Written only by src/requestlog/request-log.ts, behind the request path; read by the dashboard.
import { sql, type Kysely, type Selectable } from "kysely";
import { Statement, type SqlExec } from "./sqlite-writer.js";
import type { Database, RequestLogTable } from "./tables.js";

/** One request as the request path hands it over: plain numbers, turned into rows when written. */
export interface RequestLogEntry {
  createdAt: number;
  requestId: string;
  accountId: string | null;
  keyId: string | null;
  method: string;
  route: string;
  model: string | null;
  provider: string | null;
  deployment: string | null;
  status: number;
  errorType: string | null;
  /** The gateway's own message (bounded to MAX_MESSAGE here); never prompt text. */
  errorMessage: string | null;
  /** The model id the request named, as sent (bounded to MAX_TEXT here). */
  requestedModel: string | null;
  latencyUs: number;
  firstByteUs: number | null;
  attempts: number | null;
  inputTokens: number | null;
  cachedTokens: number | null;
  outputTokens: number | null;
  reasoningTokens: number | null;
  costNano: bigint | null;
  estimated: 0 | 1 | null;
  /** Guardrail decisions, "side:guardrail:action" comma-separated (bounded to MAX_MESSAGE here); never text. */
  guardrails?: string | null;
  /** The request's tags, "key=value" joined by commas (core/request-tags.ts bounds them); null: none. */
  tags?: string | null;
}

const COLUMNS = [
  "created_at",
  "request_id",
  "account_id",
  "key_id",
  "method",
  "route",
  "model",
  "provider",
  "deployment",
  "status",
  "error_type",
  "error_message",
  "requested_model",
  "latency_us",
  "first_byte_us",
  "attempts",
  "input_tokens",
  "cached_tokens",
  "output_tokens",
  "reasoning_tokens",
  "cost_nano",
  "estimated",
  "guardrails",
  "tags",
] as const;

/** Text fields are bounded here too, whatever the request path gave (names are catalog ids, but a log must never grow a row without limit). */
const MAX_TEXT = 200;
/** An error message: long enough for the gateway's own sentences (a model id and a hint in them). */
export const MAX_MESSAGE = 500;

/** The request's tags: at most 10 of at most 64 + 1 + 128 characters, with their commas. */
const MAX_TAGS_TEXT = 2000;

function bounded(text: string | null, max = MAX_TEXT): string | null {
  return text === null || text.length <= max ? text : text.slice(0, max);
}

function valuesOf(e: RequestLogEntry): unknown[] {
  return [
    e.createdAt,
    bounded(e.requestId),
    bounded(e.accountId),
    bounded(e.keyId),
    bounded(e.method),
    bounded(e.route),
    bounded(e.model),
    bounded(e.provider),
    bounded(e.deployment),
    e.status,
    bounded(e.errorType),
    bounded(e.errorMessage, MAX_MESSAGE),
    bounded(e.requestedModel),
    e.latencyUs,
    e.firstByteUs,
    e.attempts,
    e.inputTokens,
    e.cachedTokens,
    e.outputTokens,
    e.reasoningTokens,
    e.costNano,
    e.estimated,
    bounded(e.guardrails ?? null, MAX_MESSAGE),
    bounded(e.tags ?? null, MAX_TAGS_TEXT),
  ];
}

/** Rows per INSERT statement: 23 parameters each, far below either database's parameter limit. */
export const ROWS_PER_INSERT = 100;

/** Multi-row INSERT statements by row count, prepared once per connection (sqlite-writer.ts). */
const sqliteInserts = new Map<number, Statement<never>>();

function sqliteInsert(rows: number): Statement<never> {
  let statement = sqliteInserts.get(rows);
  if (statement === undefined) {
    const tuple = `(${COLUMNS.map(() => "?").join(", ")})`;
    statement = new Statement(`insert into request_log (${COLUMNS.join(", ")}) values ${Array.from({ length: rows }, () => tuple).join(", ")}`);
    sqliteInserts.set(rows, statement);
  }
  return statement;
}

/** SQLite: the entries' rows, inside a transaction the caller's writer holds (synchronous). */
export function insertRequestLogSqlite(exec: SqlExec, entries: readonly RequestLogEntry[]): void {
  for (let start = 0; start < entries.length; start += ROWS_PER_INSERT) {
    const chunk = entries.slice(start, start + ROWS_PER_INSERT);
    sqliteInsert(chunk.length).changes(exec, chunk.flatMap(valuesOf));
  }
}

/** PostgreSQL: the entries' rows, a multi-row INSERT per chunk, on one pooled connection. */
export async function insertRequestLogPostgres(db: Kysely<Database>, entries: readonly RequestLogEntry[]): Promise<void> {
  for (let start = 0; start < entries.length; start += ROWS_PER_INSERT) {
    const chunk = entries.slice(start, start + ROWS_PER_INSERT);
    await db
      .insertInto("request_log")
      .values(
        chunk.map((e) => {
          const v = valuesOf(e);
          const row: Record<string, unknown> = {};
          COLUMNS.forEach((column, i) => (row[column] = typeof v[i] === "number" ? BigInt(v[i]) : v[i]));
          return row as never;
        }),
      )
      .execute();
  }
}

const SQLITE_PRUNE = new Statement<never>("delete from request_log where id in (select id from request_log where created_at < ? order by created_at limit ?)");

/** SQLite: deletes at most `limit` rows older than `before` (epoch ms); the count deleted. */
export function pruneRequestLogSqlite(exec: SqlExec, before: number, limit: number): number {
  return Number(SQLITE_PRUNE.changes(exec, [before, limit]));
}

/** PostgreSQL: as pruneRequestLogSqlite. */
export async function pruneRequestLogPostgres(db: Kysely<Database>, before: number, limit: number): Promise<number> {
  const result = await sql`delete from request_log where id in (select id from request_log where created_at < ${BigInt(before)} order by created_at limit ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/** "4xx" and "5xx" (and "2xx", "3xx") are classes; "error" is every status from 400. */
export type StatusFilter = { exact: number } | { from: number; below: number };

export interface RequestLogFilter {
  /** The account whose requests are listed; undefined: every account and the unattributed ones (administrators). */
  accountId?: string;
  keyId?: string;
  model?: string;
  status?: StatusFilter;
  requestId?: string;
  /** created_at >= since (epoch ms). */
  since?: number;
  /** created_at < until (epoch ms). */
  until?: number;
}

/** Where the previous page ended: rows strictly older come next. */
export interface RequestLogCursor {
  createdAt: bigint;
  id: bigint;
}

export type RequestLogRow = Selectable<RequestLogTable> & { key_name: string | null; key_prefix: string | null };

/** One page, newest first: at most `limit` rows after `cursor`. */
export async function requestLogPage(db: Kysely<Database>, filter: RequestLogFilter, limit: number, cursor?: RequestLogCursor): Promise<RequestLogRow[]> {
  let query = db
    .selectFrom("request_log as r")
    .leftJoin("keys as k", "k.id", "r.key_id")
    .selectAll("r")
    .select(["k.name as key_name", "k.prefix as key_prefix"])
    .orderBy("r.created_at", "desc")
    .orderBy("r.id", "desc")
    .limit(limit);
  if (filter.accountId !== undefined) query = query.where("r.account_id", "=", filter.accountId);
  if (filter.keyId !== undefined) query = query.where("r.key_id", "=", filter.keyId);
  if (filter.model !== undefined) query = query.where("r.model", "=", filter.model);
  if (filter.requestId !== undefined) query = query.where("r.request_id", "=", filter.requestId);
  const status = filter.status;
  if (status !== undefined) {
    if ("exact" in status) query = query.where("r.status", "=", BigInt(status.exact));
    else query = query.where("r.status", ">=", BigInt(status.from)).where("r.status", "<", BigInt(status.below));
  }
  if (filter.since !== undefined) query = query.where("r.created_at", ">=", BigInt(filter.since));
  if (filter.until !== undefined) query = query.where("r.created_at", "<", BigInt(filter.until));
  if (cursor !== undefined) {
    query = query.where((eb) => eb.or([eb("r.created_at", "<", cursor.createdAt), eb.and([eb("r.created_at", "=", cursor.createdAt), eb("r.id", "<", cursor.id)])]));
  }
  return query.execute();
}
