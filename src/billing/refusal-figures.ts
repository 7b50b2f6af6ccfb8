// The figures behind a budget or cap refusal, read after the refusal (off the request path that
// succeeds): what the cap is, what is spent and held, and what this request would need, so that a
// client can tell a spent budget from a request too large for what is left.
import type { Kysely } from "kysely";
import { formatUsd, type Nano } from "../core/money.js";
import { GatewayError } from "../errors/catalogue.js";
import type { Database } from "../store/tables.js";
import { LimitRefusal } from "./admission.js";

export interface RefusedRequest {
  accountId: string;
  keyId: string;
  month: string;
  /** The projected cost and tokens admission held for. */
  amount: Nano;
  tokens: number;
}

/** The refusal with its figures in the message, or the refusal as it was for any other kind. */
export async function withRefusalFigures(db: Kysely<Database>, error: GatewayError, request: RefusedRequest): Promise<GatewayError> {
  const message = await figuresMessage(db, error, request);
  if (message === null) return error;
  const base = new GatewayError(error.type, message, error.details);
  return error instanceof LimitRefusal ? new LimitRefusal(base, error.headroom) : base;
}

async function figuresMessage(db: Kysely<Database>, error: GatewayError, request: RefusedRequest): Promise<string | null> {
  // Periodic budgets and caps (details.code key_period_*) already name their period and reset.
  if ((error.type === "key_budget_exceeded" || error.type === "key_token_cap_exceeded") && error.details.code === undefined) {
    const key = await db
      .selectFrom("keys")
      .select(["budget_cap_nano", "spent_nano", "held_nano", "token_cap", "tokens_used", "held_tokens"])
      .where("id", "=", request.keyId)
      .executeTakeFirst();
    if (!key) return null;
    if (error.type === "key_budget_exceeded" && key.budget_cap_nano !== null) {
      return `This request would exceed the key's budget cap of ${usd(key.budget_cap_nano)} USD: the key has spent ${usd(key.spent_nano)} USD and holds ${usd(key.held_nano)} USD for requests in flight, and this request needs up to ${usd(request.amount)} USD.`;
    }
    if (error.type === "key_token_cap_exceeded" && key.token_cap !== null) {
      return `This request would exceed the key's token cap of ${String(key.token_cap)} tokens: the key has used ${String(key.tokens_used)} and holds ${String(key.held_tokens)} for requests in flight, and this request needs up to ${request.tokens}.`;
    }
    return null;
  }
  if (error.type === "quota_exceeded" && error.details.code === "monthly_budget_exceeded") {
    const account = await db.selectFrom("accounts").select(["monthly_budget_nano", "monthly_token_budget"]).where("id", "=", request.accountId).executeTakeFirst();
    const used = await db
      .selectFrom("monthly_usage")
      .select(["cost_nano", "tokens"])
      .where("account_id", "=", request.accountId)
      .where("month", "=", request.month)
      .executeTakeFirst();
    if (!account) return null;
    const figures: string[] = [];
    if (account.monthly_budget_nano !== null) {
      figures.push(`the budget is ${usd(account.monthly_budget_nano)} USD with ${usd(used?.cost_nano ?? 0n)} USD spent, and this request needs up to ${usd(request.amount)} USD`);
    }
    if (account.monthly_token_budget !== null) {
      figures.push(`the token budget is ${String(account.monthly_token_budget)} with ${String(used?.tokens ?? 0n)} used, and this request needs up to ${request.tokens}`);
    }
    return figures.length === 0 ? null : `${error.message} This month ${figures.join("; ")}.`;
  }
  return null;
}

const usd = (nano: bigint | number): string => formatUsd(BigInt(nano));
