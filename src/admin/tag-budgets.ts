// Budgets on tags (docs/billing.md, "Tags and tag budgets"), set by administrators through the admin
// API, the CLI and the dashboard's Teams page: one validation, one audited change, one view.
import { z } from "zod";
import { budgetUseJson, type BudgetUseJson } from "../billing/budget-view.js";
import { nextMonthStart } from "../billing/admission.js";
import { monthOf } from "../core/ids.js";
import { formatUsd, MAX_BALANCE, type Nano } from "../core/money.js";
import { checkedTagText } from "../core/request-tags.js";
import { GatewayError } from "../errors/catalogue.js";
import type { AuditActor, AuditFields } from "../store/audit-store.js";
import type { Store } from "../store/index.js";
import { TagBudgetsStore, type TagBudget } from "../store/tag-budgets-store.js";
import { id, tokenCount, usd } from "./routes/route.js";

/** A budget at most the largest total spend an account may reach (999,999,999.99 USD). */
const MAX_BUDGET = MAX_BALANCE * 1000n;

const tagText = z.string().min(3).max(200);

/** POST /tag-budgets: sets (creates or replaces) the budget on a tag; at least one of the two limits. */
export const tagBudgetBody = z
  .object({
    tag: tagText,
    /** Null or absent: gateway-wide (every account's requests with the tag). */
    account_id: id.nullable().optional(),
    monthly_budget_usd: usd(MAX_BUDGET).nullable().optional(),
    monthly_token_budget: tokenCount.nullable().optional(),
  })
  .strict()
  .refine((b) => b.monthly_budget_usd != null || b.monthly_token_budget != null, { message: "give monthly_budget_usd and/or monthly_token_budget" });

/** DELETE /tag-budgets?tag=…&account_id=…: removes one budget. */
export const tagBudgetKeyQuery = z.object({ tag: tagText, account_id: id.optional() }).strict();

export interface TagBudgetJson extends BudgetUseJson {
  tag: string;
  account_id: string | null;
  scope: string;
  code: "tag_budget_exceeded";
  resets_at: string;
  updated_at: string;
}

function auditFields(b: TagBudget | null): AuditFields {
  if (b === null) return {};
  return {
    tag: b.tag,
    account_id: b.accountId,
    monthly_budget_usd: b.monthlyBudget === null ? null : formatUsd(b.monthlyBudget),
    monthly_token_budget: b.monthlyTokenBudget === null ? null : Number(b.monthlyTokenBudget),
  };
}

/** Sets the budget and records it (action tag_budget.set, before and after) in one transaction. */
export async function setTagBudget(
  store: Store,
  actor: AuditActor,
  body: { tag: string; account_id?: string | null; monthly_budget_usd?: Nano | null; monthly_token_budget?: number | null },
  now: number,
): Promise<TagBudget> {
  const tag = checkedTagText(body.tag, "tag");
  const accountId = body.account_id ?? null;
  if (accountId !== null && !(await store.accounts.get(accountId))) throw new GatewayError("account_not_found", `No account ${accountId}.`, { param: "account_id" });
  const tokens = body.monthly_token_budget == null ? null : BigInt(body.monthly_token_budget);
  return store.audited(actor, async (tx) => {
    const { before, after } = await new TagBudgetsStore(tx.trx).set(tag, accountId, body.monthly_budget_usd ?? null, tokens, now);
    await tx.record({ action: "tag_budget.set", targetType: "tag_budget", targetId: after.scope, before: auditFields(before), after: auditFields(after) });
    return after;
  });
}

/** Removes the budget (404 when there is none) and records it (action tag_budget.remove). */
export async function removeTagBudget(store: Store, actor: AuditActor, query: { tag: string; account_id?: string }): Promise<TagBudget> {
  const tag = checkedTagText(query.tag, "tag");
  return store.audited(actor, async (tx) => {
    const removed = await new TagBudgetsStore(tx.trx).remove(tag, query.account_id ?? null);
    if (removed === null) throw new GatewayError("not_found", `No budget on the tag ${tag}${query.account_id === undefined ? "" : ` for ${query.account_id}`}.`);
    await tx.record({ action: "tag_budget.remove", targetType: "tag_budget", targetId: removed.scope, before: auditFields(removed), after: {} });
    return removed;
  });
}

/** Budgets with this month's use, as the admin API, the dashboard and /v1/me show them. */
export async function tagBudgetsJson(store: Store, budgets: readonly TagBudget[], now: number): Promise<TagBudgetJson[]> {
  const month = monthOf(now);
  const uses = await store.tagBudgets.usage(budgets, month);
  return budgets.map((b, i) => ({
    tag: b.tag,
    account_id: b.accountId,
    scope: b.scope,
    code: "tag_budget_exceeded",
    resets_at: nextMonthStart(month),
    updated_at: new Date(b.updatedAt).toISOString(),
    ...budgetUseJson(uses[i]!),
  }));
}

/** Every budget on a tag, with this month's use. */
export async function tagBudgetListView(store: Store, now: number) {
  const month = monthOf(now);
  return { object: "list" as const, month, resets_at: nextMonthStart(month), data: await tagBudgetsJson(store, await store.tagBudgets.list(), now) };
}
