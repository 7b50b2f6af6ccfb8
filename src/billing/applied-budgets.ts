// Every budget that applies to a key's requests, in the order admission judges them (docs/billing.md,
// "Workspace and member budgets"): the account's monthly budget, the key's lifetime caps, its periodic
// budget, its workspace's budget, the owner's member budget and the budgets on the key's default tags. Only those with a limit: a budget
// without one refuses nothing. GET /v1/me shows them, each with what is left, so that a client reads
// in one list why its next request may be refused and when that budget starts over.
import type { ApiKey } from "../store/keys-store.js";
import type { BudgetUse } from "../store/workspace-budgets-store.js";
import { budgetUseJson, type BudgetUseJson } from "./budget-view.js";
import { currentPeriodUse, nextPeriodStart } from "./key-period.js";
import type { AccountProfile } from "./usage-queries.js";

export type BudgetLevel = "account" | "key" | "key_period" | "workspace" | "member" | "tag";

export interface AppliedBudgetJson extends BudgetUseJson {
  level: BudgetLevel;
  /** The refusal (402) when this budget is what stops a request. */
  code: string;
  /** When the budget starts over (ISO, UTC); null for the key's lifetime caps. */
  resets_at: string | null;
  /** A tag budget's tag ("key=value"); only on level "tag". */
  tag?: string;
}

/** A budget on one of the key's default tags (docs/billing.md, "Tags and tag budgets"). */
export interface TagBudgetUse {
  tag: string;
  use: BudgetUse;
  resetsAt: string;
}

export interface WorkspaceUse {
  budget: BudgetUse;
  member: BudgetUse;
  resetsAt: string;
}

const limited = (use: BudgetUse): boolean => use.limit !== null || use.tokenLimit !== null;

export function appliedBudgets(profile: AccountProfile, key: ApiKey, workspace: WorkspaceUse | null, now: number, tags: readonly TagBudgetUse[] = []): AppliedBudgetJson[] {
  const entries: Array<{ level: BudgetLevel; code: string; resetsAt: string | null; use: BudgetUse; tag?: string }> = [];
  const big = (n: number | null): bigint | null => (n === null ? null : BigInt(n));
  entries.push({
    level: "account",
    code: "monthly_budget_exceeded",
    resetsAt: profile.monthResetsAt,
    use: {
      scope: `account:${profile.accountId}`,
      limit: profile.monthlyBudget,
      tokenLimit: big(profile.monthlyTokenBudget),
      spent: profile.monthSpent,
      tokens: BigInt(profile.monthTokens),
      held: profile.held,
      heldTokens: BigInt(profile.heldTokens),
    },
  });
  const keyHeld = { held: key.held, heldTokens: BigInt(key.heldTokens) };
  entries.push({
    level: "key",
    code: key.budgetCap !== null ? "key_budget_exceeded" : "key_token_cap_exceeded",
    resetsAt: null,
    use: { scope: `key:${key.id}`, limit: key.budgetCap, tokenLimit: big(key.tokenCap), spent: key.spent, tokens: BigInt(key.tokensUsed), ...keyHeld },
  });
  if (key.period !== null) {
    const use = currentPeriodUse(key.period, key.periodStartedAt, key.periodSpent, key.periodTokensUsed, now);
    entries.push({
      level: "key_period",
      code: key.periodBudget !== null ? "key_period_budget_exceeded" : "key_period_token_cap_exceeded",
      resetsAt: new Date(nextPeriodStart(key.period, now)).toISOString(),
      use: { scope: `key:${key.id}:${key.period}`, limit: key.periodBudget, tokenLimit: big(key.periodTokenCap), spent: use.spent, tokens: BigInt(use.tokens), ...keyHeld },
    });
  }
  if (workspace !== null) {
    entries.push({ level: "workspace", code: "workspace_budget_exceeded", resetsAt: workspace.resetsAt, use: workspace.budget });
    entries.push({ level: "member", code: "member_budget_exceeded", resetsAt: workspace.resetsAt, use: workspace.member });
  }
  for (const t of tags) entries.push({ level: "tag", code: "tag_budget_exceeded", resetsAt: t.resetsAt, use: t.use, tag: t.tag });
  return entries
    .filter((e) => limited(e.use))
    .map((e) => ({ level: e.level, code: e.code, resets_at: e.resetsAt, ...(e.tag !== undefined && { tag: e.tag }), ...budgetUseJson(e.use) }));
}
