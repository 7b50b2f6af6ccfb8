// How a budget scope's use is shown (GET /v1/me, the dashboard's workspace page): limits, this month's
// spend and tokens, what holds in flight reserve, and what is left (never below 0). Money as decimal
// strings (formatUsd), token counts as numbers.
import { formatUsd } from "../core/money.js";
import type { BudgetUse } from "../store/workspace-budgets-store.js";

export interface BudgetUseJson {
  usd: string | null;
  tokens: number | null;
  spent_usd: string;
  tokens_used: number;
  held_usd: string;
  held_tokens: number;
  remaining_usd: string | null;
  remaining_tokens: number | null;
}

const left = (limit: bigint, used: bigint, held: bigint): bigint => (limit - used - held > 0n ? limit - used - held : 0n);

export function budgetUseJson(use: BudgetUse): BudgetUseJson {
  return {
    usd: use.limit === null ? null : formatUsd(use.limit),
    tokens: use.tokenLimit === null ? null : Number(use.tokenLimit),
    spent_usd: formatUsd(use.spent),
    tokens_used: Number(use.tokens),
    held_usd: formatUsd(use.held),
    held_tokens: Number(use.heldTokens),
    remaining_usd: use.limit === null ? null : formatUsd(left(use.limit, use.spent, use.held)),
    remaining_tokens: use.tokenLimit === null ? null : Number(left(use.tokenLimit, use.tokens, use.heldTokens)),
  };
}
