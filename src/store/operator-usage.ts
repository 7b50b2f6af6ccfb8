// What the gateway's operator spends upstream itself ("Test" on a provider key): recorded in the
// ledger as usage of one system account, the operator's, never of a customer's. The account is made
// on the first such row (closed: nobody signs in or sends requests with it), is left out of the
// account list, search and count, and has no balance: each of its rows carries its whole cost as
// shortfall (note "shortfall_nano=<cost>"), which `ledger recompute` reads as not taken from any
// balance, while total_spent, monthly_usage and the hourly rollup count it like any usage. The row is
// a plain INSERT, chained by the database's triggers like an administrator's credit.
import { sql, type Kysely, type Transaction } from "kysely";
import { monthOf, nowMs } from "../core/ids.js";
import type { Database } from "./tables.js";

export const OPERATOR_ACCOUNT_ID = "acct_operator";
/** A reserved address (RFC 2606 .invalid): no person can sign up with it. */
const OPERATOR_EMAIL = "operator@gateway.invalid";

export interface OperatorUsage {
  requestId: string;
  model: string;
  provider: string;
  inputTokens: bigint;
  cachedTokens: bigint;
  outputTokens: bigint;
  reasoningTokens: bigint;
  estimated: boolean;
  cost: bigint;
  /** The dimension set's ledger columns (DimensionSet.ledgerColumns) and their values. */
  dimensionColumns: Readonly<Record<string, bigint>>;
  now?: number;
}

/** Appends the operator's usage row and its figures; call it inside the audited change that caused it. */
export async function recordOperatorUsage(db: Kysely<Database> | Transaction<Database>, usage: OperatorUsage): Promise<void> {
  const now = usage.now === undefined ? nowMs() : BigInt(usage.now);
  await db
    .insertInto("accounts")
    .values({
      id: OPERATOR_ACCOUNT_ID,
      email: OPERATOR_EMAIL,
      password_hash: null,
      status: "closed",
      tier: "operator",
      is_admin: 0n,
      balance_nano: 0n,
      total_spent_nano: 0n,
      held_nano: 0n,
      held_tokens: 0n,
      monthly_budget_nano: null,
      monthly_token_budget: null,
      default_model: null,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.column("id").doNothing())
    .execute();
  await db
    .insertInto("ledger")
    .values({
      ...(usage.dimensionColumns as Record<string, bigint>),
      created_at: now,
      account_id: OPERATOR_ACCOUNT_ID,
      key_id: null,
      request_id: usage.requestId,
      kind: "usage",
      model: usage.model,
      provider: usage.provider,
      route: "chat",
      input_tokens: usage.inputTokens,
      cached_tokens: usage.cachedTokens,
      output_tokens: usage.outputTokens,
      reasoning_tokens: usage.reasoningTokens,
      cost_nano: usage.cost,
      estimated: usage.estimated ? 1n : 0n,
      note: `shortfall_nano=${usage.cost}`,
      deployment: null,
      attempts: 1n,
    })
    .execute();
  await db
    .updateTable("accounts")
    .set((eb) => ({ total_spent_nano: eb("total_spent_nano", "+", usage.cost), updated_at: now }))
    .where("id", "=", OPERATOR_ACCOUNT_ID)
    .execute();
  const tokens = usage.inputTokens + usage.outputTokens;
  await sql`insert into monthly_usage (account_id, month, cost_nano, tokens, requests) values (${OPERATOR_ACCOUNT_ID}, ${monthOf(now)}, ${usage.cost}, ${tokens}, 1)
    on conflict (account_id, month) do update set cost_nano = monthly_usage.cost_nano + excluded.cost_nano,
      tokens = monthly_usage.tokens + excluded.tokens, requests = monthly_usage.requests + excluded.requests`.execute(db);
}
