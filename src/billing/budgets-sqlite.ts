// The budget scopes on SQLite (core/budget-scopes.ts; ADR 0037): budget_usage read and written by
// the statements of admission, settlement and release, inside the write batcher's transaction
// (sqlite-writer.ts), whose write lock from BEGIN IMMEDIATE to COMMIT makes them exact across
// gateway processes sharing the file. PostgreSQL's gw_batch does the same (gw-batch-function.ts).
import type { Nano } from "../core/money.js";
import type { BudgetCounters } from "../core/budget-scopes.js";
import { Statement, type SqlExec } from "../store/sqlite-writer.js";

interface BudgetRow {
  month: string;
  cost_nano: bigint;
  tokens: bigint;
  held_nano: bigint;
  held_tokens: bigint;
}

const BUDGET_ROW = new Statement<BudgetRow>(`select month, cost_nano, tokens, held_nano, held_tokens from budget_usage where scope = ?`);

// Parameters: scope, month, amount, tokens. A new row starts in the admission's month with nothing settled.
const HOLD_IN_BUDGET = new Statement<never>(`
  insert into budget_usage (scope, month, cost_nano, tokens, held_nano, held_tokens) values (?, ?, 0, 0, ?, ?)
  on conflict (scope) do update set held_nano = budget_usage.held_nano + excluded.held_nano, held_tokens = budget_usage.held_tokens + excluded.held_tokens`);

// Parameters: scope, month, cost, tokens, held amount, held tokens. The month's counters add up; a
// settlement in a later month starts them afresh; one dated before the row's month (a process whose
// clock lags at the turn of a month) leaves them, since that month is over. Every SET expression reads
// the row as it was before the UPDATE.
const CHARGE_BUDGET = new Statement<never>(`
  insert into budget_usage (scope, month, cost_nano, tokens, held_nano, held_tokens) values (?, ?, ?, ?, 0, 0)
  on conflict (scope) do update set
    cost_nano = case when excluded.month = budget_usage.month then budget_usage.cost_nano + excluded.cost_nano
      when excluded.month > budget_usage.month then excluded.cost_nano else budget_usage.cost_nano end,
    tokens = case when excluded.month = budget_usage.month then budget_usage.tokens + excluded.tokens
      when excluded.month > budget_usage.month then excluded.tokens else budget_usage.tokens end,
    month = max(budget_usage.month, excluded.month),
    held_nano = budget_usage.held_nano - ?, held_tokens = budget_usage.held_tokens - ?`);

// Parameters: amount, tokens, scope.
const GIVE_BACK_BUDGET = new Statement<never>(`update budget_usage set held_nano = held_nano - ?, held_tokens = held_tokens - ? where scope = ?`);

/** Each scope's counters as they stand in this transaction (undefined: no row yet). */
export function budgetCountersSqlite(exec: SqlExec, scopes: readonly string[]): Array<BudgetCounters | undefined> {
  return scopes.map((scope) => {
    const row = BUDGET_ROW.first(exec, [scope]);
    return row && { month: row.month, cost: row.cost_nano, tokens: row.tokens, held: row.held_nano, heldTokens: row.held_tokens };
  });
}

/** Reserves an admission's amount and tokens in every scope. */
export function holdInBudgetsSqlite(exec: SqlExec, scopes: readonly string[], month: string, amount: Nano, tokens: bigint): void {
  for (const scope of scopes) HOLD_IN_BUDGET.changes(exec, [scope, month, amount, tokens]);
}

/** A settlement in every scope: the cost and tokens to `month`, the hold's reservation (0 when already released) given back. */
export function chargeBudgetsSqlite(exec: SqlExec, scopes: readonly string[], month: string, cost: Nano, tokens: bigint, heldAmount: bigint, heldTokens: bigint): void {
  for (const scope of scopes) CHARGE_BUDGET.changes(exec, [scope, month, cost, tokens, heldAmount, heldTokens]);
}

/** A released hold's reservation given back to every scope it holds in. */
export function giveBackBudgetsSqlite(exec: SqlExec, scopes: readonly string[], amount: bigint, tokens: bigint): void {
  for (const scope of scopes) GIVE_BACK_BUDGET.changes(exec, [amount, tokens, scope]);
}

/** The scopes of a hold row's budgets column (JSON array of text; null: none). */
export function scopesOfColumn(budgets: string | null): readonly string[] {
  if (budgets === null) return [];
  const parsed: unknown = JSON.parse(budgets);
  return Array.isArray(parsed) ? parsed.filter((s): s is string => typeof s === "string") : [];
}
