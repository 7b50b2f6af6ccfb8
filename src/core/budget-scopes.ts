// Budget scopes (ADR 0037; docs/billing.md, "Workspace and member budgets"): monthly budgets beyond the
// account's own, held and charged in the same admission and settlement as the account and the key.
// A scope is a name and its limits: "workspace:<id>" (the workspace's USD and token budgets) and
// "member:<workspace>:<account>" (the per-member USD budget, for the key owner's spend through the
// workspace's keys). The limits are resolved when the key is authenticated (the workspace's row
// travels with the cached key, like the traffic limits) and carried on the admission; the counters
// live in budget_usage (migration 0029), one row per scope. A tag's budget (core/request-tags.ts,
// "tag:<key=value>" or "tag@<account>:<key=value>") is another scope name with its own refusal code.
import type { Nano } from "./money.js";

/** The refusal code of each kind of scope (402; the error catalogue's budget_exceeded types). */
export type BudgetCode = "workspace_budget_exceeded" | "member_budget_exceeded" | "tag_budget_exceeded";

/** A budget that applies to an admission: its scope and its monthly limits (null: that figure is not limited). */
export interface BudgetLimit {
  scope: string;
  code: BudgetCode;
  costLimit: Nano | null;
  tokenLimit: bigint | null;
}

/** What a workspace imposes on the keys tagged with it: read with the key at authentication. */
export interface WorkspacePolicy {
  id: string;
  name: string;
  /** The workspace's monthly USD budget (nano-USD) and token budget; null: none. */
  monthlyBudget: Nano | null;
  monthlyTokenBudget: bigint | null;
  /** Each member's monthly USD budget for their spend through the workspace's keys; null: none. */
  memberMonthlyBudget: Nano | null;
  /** The model ids the workspace's keys may use (intersected with the tier's and the key's own); null: all. */
  allowedModels: string[] | null;
  /** The `selected` guardrails (config file) the workspace's keys get; []: none. */
  guardrails: string[];
  /** The MCP servers and tools the workspace's keys may use at /mcp (core/mcp-names.ts; intersected with the key's); null: all. */
  allowedMcp?: string[] | null;
}

export function workspaceScope(workspaceId: string): string {
  return `workspace:${workspaceId}`;
}

export function memberScope(workspaceId: string, accountId: string): string {
  return `member:${workspaceId}:${accountId}`;
}

/** The scope's workspace id and, for a member scope, the account; null for a name of another kind. */
export function parseScope(scope: string): { workspaceId: string; accountId: string | null } | null {
  const parts = scope.split(":");
  if (parts[0] === "workspace" && parts.length === 2) return { workspaceId: parts[1]!, accountId: null };
  if (parts[0] === "member" && parts.length === 3) return { workspaceId: parts[1]!, accountId: parts[2]! };
  return null;
}

const scopeLists = new WeakMap<WorkspacePolicy, Map<string, readonly BudgetLimit[]>>();

/**
 * The budget scopes of a key of `accountId` tagged with `workspace`: always both the workspace's and
 * the member's, limited or not, so that their spend is counted from the first request (a budget set
 * mid-month judges the month's whole spend through the workspace's keys). One list per policy and
 * account: the request path reuses it (admission-postgres.ts builds its field once per list).
 */
export function budgetLimitsOf(workspace: WorkspacePolicy, accountId: string): readonly BudgetLimit[] {
  let byAccount = scopeLists.get(workspace);
  if (byAccount === undefined) scopeLists.set(workspace, (byAccount = new Map<string, readonly BudgetLimit[]>()));
  let limits = byAccount.get(accountId);
  if (limits === undefined) {
    limits = [
      { scope: workspaceScope(workspace.id), code: "workspace_budget_exceeded", costLimit: workspace.monthlyBudget, tokenLimit: workspace.monthlyTokenBudget },
      { scope: memberScope(workspace.id, accountId), code: "member_budget_exceeded", costLimit: workspace.memberMonthlyBudget, tokenLimit: null },
    ];
    byAccount.set(accountId, limits);
  }
  return limits;
}

/** A scope's counters as admission reads them: the month they belong to, settled cost and tokens, and what is held. */
export interface BudgetCounters {
  month: string;
  cost: bigint;
  tokens: bigint;
  held: bigint;
  heldTokens: bigint;
}

/** What a scope has used in `month`: its settled counters when they belong to that month, else 0. */
export function usedIn(counters: BudgetCounters | undefined, month: string): { cost: bigint; tokens: bigint } {
  if (counters === undefined || counters.month !== month) return { cost: 0n, tokens: 0n };
  return { cost: counters.cost, tokens: counters.tokens };
}

/**
 * Whether a limit refuses a reservation of `amount` (or `tokens`) on top of `used` and `held`: when
 * it would go over, and also when nothing is left (used + held already at the limit), so that a
 * budget equal to the spend refuses even a request projected at 0 (a free model).
 * PostgreSQL's gw_batch applies the same rule (gw-batch-function.ts).
 */
export function overLimit(limit: bigint | null, used: bigint, held: bigint, amount: bigint): boolean {
  return limit !== null && (used + held + amount > limit || used + held >= limit);
}

/** The first budget that refuses, with its figures; null when every one allows the reservation. */
export function judgeBudgets(
  limits: readonly BudgetLimit[],
  counters: ReadonlyArray<BudgetCounters | undefined>,
  month: string,
  amount: Nano,
  tokens: bigint,
): { index: number; figures: BudgetFigures } | null {
  for (let i = 0; i < limits.length; i++) {
    const limit = limits[i]!;
    const c = counters[i];
    const used = usedIn(c, month);
    const held = c?.held ?? 0n;
    const heldTokens = c?.heldTokens ?? 0n;
    if (overLimit(limit.costLimit, used.cost, held, amount) || overLimit(limit.tokenLimit, used.tokens, heldTokens, tokens)) {
      return { index: i, figures: { scope: limit.scope, costLimit: limit.costLimit, tokenLimit: limit.tokenLimit, cost: used.cost, tokens: used.tokens, held, heldTokens } };
    }
  }
  return null;
}

/** A refusing budget's figures as they stood (the message's numbers). */
export interface BudgetFigures {
  /** The refusing budget's scope (names the tag of a tag budget's refusal). */
  scope?: string;
  costLimit: bigint | null;
  tokenLimit: bigint | null;
  cost: bigint;
  tokens: bigint;
  held: bigint;
  heldTokens: bigint;
}

/** The least room left in the budgets' USD and token limits (limit - used - held), null where none is limited. */
export function budgetHeadroom(
  limits: readonly BudgetLimit[],
  counters: ReadonlyArray<BudgetCounters | undefined>,
  month: string,
): { budgetCost: bigint | null; budgetTokens: bigint | null } {
  let budgetCost: bigint | null = null;
  let budgetTokens: bigint | null = null;
  limits.forEach((limit, i) => {
    const c = counters[i];
    const used = usedIn(c, month);
    if (limit.costLimit !== null) {
      const room = limit.costLimit - used.cost - (c?.held ?? 0n);
      if (budgetCost === null || room < budgetCost) budgetCost = room;
    }
    if (limit.tokenLimit !== null) {
      const room = limit.tokenLimit - used.tokens - (c?.heldTokens ?? 0n);
      if (budgetTokens === null || room < budgetTokens) budgetTokens = room;
    }
  });
  return { budgetCost, budgetTokens };
}
