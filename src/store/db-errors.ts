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
