// The budgets on tags as admission reads them (docs/billing.md, "Tags and tag budgets"): every row of
// tag_budgets held in memory, read again by the auth cache's poll (pipeline/auth-cache.ts, every
// AUTH_EVENT_POLL_MS) so that a budget set through another process applies here within a second,
// and at once in the process that set it (reload after the change). A small table: one read per poll.
import type { BudgetLimit } from "../core/budget-scopes.js";
import type { Store } from "../store/index.js";
import type { TagBudget } from "../store/tag-budgets-store.js";

export class TagBudgetCache {
  /** Gateway-wide budgets by tag, and accounts' budgets by "<account> <tag>". */
  #budgets = new Map<string, BudgetLimit>();
  #loading: Promise<void> | undefined;

  constructor(private readonly store: Store) {}

  /** Reads every budget afresh (one read in flight at a time). */
  reload(): Promise<void> {
    this.#loading ??= this.store.tagBudgets
      .list()
      .then((budgets) => {
        this.#budgets = indexed(budgets);
      })
      .finally(() => (this.#loading = undefined));
    return this.#loading;
  }

  /** The budgets a request of `accountId` with `tags` ("key=value", sorted) is held against: gateway-wide first, then the account's, per tag. */
  budgetsFor(accountId: string, tags: readonly string[]): BudgetLimit[] {
    if (this.#budgets.size === 0 || tags.length === 0) return [];
    const out: BudgetLimit[] = [];
    for (const tag of tags) {
      const wide = this.#budgets.get(tag);
      if (wide !== undefined) out.push(wide);
      const own = this.#budgets.get(`${accountId} ${tag}`);
      if (own !== undefined) out.push(own);
    }
    return out;
  }
}

function indexed(budgets: readonly TagBudget[]): Map<string, BudgetLimit> {
  const map = new Map<string, BudgetLimit>();
  for (const b of budgets) {
    const limit: BudgetLimit = { scope: b.scope, code: "tag_budget_exceeded", costLimit: b.monthlyBudget, tokenLimit: b.monthlyTokenBudget };
    map.set(b.accountId === null ? b.tag : `${b.accountId} ${b.tag}`, limit);
  }
  return map;
}
