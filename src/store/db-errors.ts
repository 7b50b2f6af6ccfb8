// Recognises database errors by kind, the same way for SQLite and PostgreSQL.

type DbErrorKind = "unique" | "check" | "foreign_key" | "trigger";

/**
 * The message of SQLite's refusal of a ledger row whose id or request_id is already recorded (migration
 * 0005's trigger, whose literal is frozen there): SQLite settlement recognises a replay by it.
 */
export const LEDGER_ROW_EXISTS = "ledger rows are append-only: this id or request_id is already recorded";

export function dbErrorKind(error: unknown): DbErrorKind | null {
  if (!error || typeof error !== "object") return null;
  const code = String((error as { code?: unknown }).code ?? "");
  switch (code) {
    case "SQLITE_CONSTRAINT_UNIQUE":
    case "SQLITE_CONSTRAINT_PRIMARYKEY":
    case "23505":
      return "unique";
    case "SQLITE_CONSTRAINT_CHECK":
    case "23514":
      return "check";
    case "SQLITE_CONSTRAINT_FOREIGNKEY":
    case "23503":
      return "foreign_key";
    case "SQLITE_CONSTRAINT_TRIGGER":
    case "P0001":
      return "trigger";
    default:
      return null;
  }
}

export function dbErrorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Socket errors of a connection to the database that could not be made or was lost. */
const UNREACHABLE_SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EPIPE", "ENOTFOUND", "EAI_AGAIN"]);
/** PostgreSQL's own: the server shutting down or starting (57P0x), and connection exceptions (class 08). */
const UNREACHABLE_SQLSTATES = /^(57P0[1-3]|08...)$/;
/** node-postgres and its pool say these in words only. */
const UNREACHABLE_MESSAGES = [
  "Connection terminated",
  "Query read timeout",
  "timeout exceeded when trying to connect",
  "Client has encountered a connection error and is not queryable",
  "Client was closed and is not queryable",
];

/**
 * Whether an error means the database could not be reached (down, restarting, partitioned, too slow
 * to connect or to answer) rather than refusing the statement: the request may be retried as is.
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  if (!error || typeof error !== "object") return false;
  const code = String((error as { code?: unknown }).code ?? "");
  if (UNREACHABLE_SOCKET_CODES.has(code) || UNREACHABLE_SQLSTATES.test(code)) return true;
  const message = error instanceof Error ? error.message : "";
  return UNREACHABLE_MESSAGES.some((text) => message.startsWith(text));
}
