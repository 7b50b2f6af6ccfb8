// Budgets on tags (migration 0030; docs/billing.md, "Tags and tag budgets"): a monthly USD and/or
// token budget on a tag "key=value", gateway-wide or for one account. Each is a budget scope
// (core/request-tags.ts tagScope) whose counters live in budget_usage like a workspace's; admission
// holds a tagged request against every budget on its tags (pipeline/tag-budget-cache.ts reads them).
// Unlike a workspace's scopes, a tag's scope exists only while it has a budget (a request carries the
// scopes of its tags' budgets only, so an unbudgeted tag locks no row): a new budget therefore starts
// its counters from the month's spend recorded with the tag in ledger_tags.
import type { Kysely, Selectable } from "kysely";
import { usedIn } from "../core/budget-scopes.js";
import { monthOf } from "../core/ids.js";
import type { Nano } from "../core/money.js";
import { tagScope } from "../core/request-tags.js";
import type { Database, TagBudgetsTable } from "./tables.js";
import { transact } from "./transact.js";
import type { BudgetUse } from "./workspace-budgets-store.js";

export interface TagBudget {
  scope: string;
  /** "key=value". */
  tag: string;
  /** Null: gateway-wide (every account's requests with the tag). */
  accountId: string | null;
  monthlyBudget: Nano | null;
  monthlyTokenBudget: bigint | null;
  updatedAt: number;
}

function toTagBudget(row: Selectable<TagBudgetsTable>): TagBudget {
  return {
    scope: row.scope,
    tag: row.tag,
    accountId: row.account_id,
    monthlyBudget: row.monthly_budget_nano === null ? null : BigInt(row.monthly_budget_nano),
    monthlyTokenBudget: row.monthly_token_budget === null ? null : BigInt(row.monthly_token_budget),
    updatedAt: Number(row.updated_at),
  };
}

/** The first instant (epoch ms) of a "YYYY-MM" month, UTC. */
function monthStart(month: string): number {
  const [year, mon] = month.split("-").map(Number) as [number, number];
  return Date.UTC(year, mon - 1, 1);
}

export class TagBudgetsStore {
  constructor(private readonly db: Kysely<Database>) {}

  async list(): Promise<TagBudget[]> {
    const rows = await this.db.selectFrom("tag_budgets").selectAll().orderBy("tag").orderBy("scope").execute();
    return rows.map(toTagBudget);
  }

  async get(tag: string, accountId: string | null): Promise<TagBudget | null> {
    const row = await this.db.selectFrom("tag_budgets").selectAll().where("scope", "=", tagScope(tag, accountId)).executeTakeFirst();
    return row ? toTagBudget(row) : null;
  }

  /**
   * Sets (creates or replaces) the budget on `tag`; returns it as it was (null: new) and as it is.
   * A new budget's counters start from this month's spend with the tag (the account's, for an account's
   * budget), so that a budget set mid-month judges the whole month; requests in flight at that moment
   * are not counted (their holds did not name the scope).
   */
  set(tag: string, accountId: string | null, monthlyBudget: Nano | null, monthlyTokenBudget: bigint | null, now: number): Promise<{ before: TagBudget | null; after: TagBudget }> {
    const scope = tagScope(tag, accountId);
    return transact(this.db, async (trx) => {
      const current = await trx.selectFrom("tag_budgets").selectAll().where("scope", "=", scope).executeTakeFirst();
      const values = { monthly_budget_nano: monthlyBudget, monthly_token_budget: monthlyTokenBudget, updated_at: BigInt(now) };
      if (current) {
        await trx.updateTable("tag_budgets").set(values).where("scope", "=", scope).execute();
      } else {
        await trx
          .insertInto("tag_budgets")
          .values({ scope, tag, account_id: accountId, created_at: BigInt(now), ...values })
          .execute();
        const month = monthOf(now);
        let spent = trx
          .selectFrom("ledger_tags")
          .select((eb) => [eb.fn.coalesce(eb.fn.sum<bigint>("cost_nano"), eb.lit(0)).as("cost"), eb.fn.coalesce(eb.fn.sum<bigint>("tokens"), eb.lit(0)).as("tokens")])
          .where("tag", "=", tag)
          .where("created_at", ">=", BigInt(monthStart(month)));
        if (accountId !== null) spent = spent.where("account_id", "=", accountId);
        const sums = await spent.executeTakeFirstOrThrow();
        const cost = BigInt(sums.cost);
        const tokens = BigInt(sums.tokens);
        await trx
          .insertInto("budget_usage")
          .values({ scope, month, cost_nano: cost, tokens, held_nano: 0n, held_tokens: 0n })
          .onConflict((oc) => oc.column("scope").doUpdateSet({ month, cost_nano: cost, tokens }))
          .execute();
      }
      const after = await trx.selectFrom("tag_budgets").selectAll().where("scope", "=", scope).executeTakeFirstOrThrow();
      return { before: current ? toTagBudget(current) : null, after: toTagBudget(after) };
    });
  }

  /** Removes the budget; returns it (null: there was none). Its counters stay in budget_usage until a new budget on the tag restarts them. */
  async remove(tag: string, accountId: string | null): Promise<TagBudget | null> {
    const row = await this.db.deleteFrom("tag_budgets").where("scope", "=", tagScope(tag, accountId)).returningAll().executeTakeFirst();
    return row ? toTagBudget(row) : null;
  }

  /** Each budget's use in `month` (0 for a scope never used). */
  async usage(budgets: readonly TagBudget[], month: string): Promise<BudgetUse[]> {
    const scopes = budgets.map((b) => b.scope);
    const rows = scopes.length === 0 ? [] : await this.db.selectFrom("budget_usage").selectAll().where("scope", "in", scopes).execute();
    const byScope = new Map(rows.map((r) => [r.scope, r]));
    return budgets.map((budget) => {
      const row = byScope.get(budget.scope);
      const counters = row && { month: row.month, cost: BigInt(row.cost_nano), tokens: BigInt(row.tokens), held: BigInt(row.held_nano), heldTokens: BigInt(row.held_tokens) };
      const used = usedIn(counters, month);
      return {
        scope: budget.scope,
        limit: budget.monthlyBudget,
        tokenLimit: budget.monthlyTokenBudget,
        spent: used.cost,
        tokens: used.tokens,
        held: counters?.held ?? 0n,
        heldTokens: counters?.heldTokens ?? 0n,
      };
    });
  }
}
