// Admission: check and reserve in ONE transaction, before anything is forwarded upstream.
//
// Order of checks (the first failing one decides the error; all are 402):
//   1. account status is not active                                  -> account_suspended
//   2. monthly budget (USD and/or tokens) for the current UTC month:
//      month's settled cost + held + projected > monthly budget      -> quota_exceeded (code monthly_budget_exceeded)
//   3. balance - held < projected cost                               -> quota_exceeded (code insufficient_balance)
//   4. key exhausted, or spent + held + projected cost > budget_cap  -> key_budget_exceeded
//   5. key exhausted, or tokens_used + held + projected > token_cap  -> key_token_cap_exceeded
//      (an exhausted key reports the cap it actually reached; a revoked or unknown key is auth_error)
//
// Why conditional UPDATEs and not read-then-write: the check and the reservation are one atomic
// statement per row, so concurrent requests, also from other gateway processes on one PostgreSQL,
// can never together reserve more than the balance or a cap allows. The account row is always locked
// first and the key row second (settlement and release use the same order: no deadlocks).
// The monthly figures live in another table (monthly_usage), which a PostgreSQL UPDATE's re-check
// under READ COMMITTED would see through a stale snapshot; so the account row is locked first and
// monthly_usage is read by a later statement, which sees every settlement that committed before the lock.
// When a conditional UPDATE matches nothing, a plain read tells which condition failed; the
// transaction is rolled back, so a refusal changes nothing.
import { sql, type Transaction } from "kysely";
import { formatUsd, type Nano } from "../core/money.js";
import { monthOf, newId } from "../core/ids.js";
import { GatewayError } from "../errors/catalogue.js";
import type { Database } from "../store/tables.js";
import type { AdmissionRequest, Hold } from "./types.js";

export interface Reservation {
  request: AdmissionRequest;
  amount: Nano;
  tokens: number;
  now: number;
  ttlMs: number;
}

export async function reserve(trx: Transaction<Database>, r: Reservation): Promise<Hold> {
  const { request, amount } = r;
  const tokens = BigInt(r.tokens);
  const month = monthOf(r.now);

  const account = await trx
    .updateTable("accounts")
    .set((eb) => ({ held_nano: eb("held_nano", "+", amount), held_tokens: eb("held_tokens", "+", tokens) }))
    .where("id", "=", request.accountId)
    .where("status", "=", "active")
    .where(sql<boolean>`balance_nano - held_nano >= ${amount}`)
    .returning(["held_nano", "held_tokens", "monthly_budget_nano", "monthly_token_budget"])
    .executeTakeFirst();
  if (!account) throw await diagnoseAccount(trx, request.accountId, amount, tokens, month);

  if (account.monthly_budget_nano !== null || account.monthly_token_budget !== null) {
    const used = await monthUsage(trx, request.accountId, month);
    // held_* already include this reservation.
    const overUsd = account.monthly_budget_nano !== null && used.cost + account.held_nano > account.monthly_budget_nano;
    const overTokens = account.monthly_token_budget !== null && used.tokens + account.held_tokens > account.monthly_token_budget;
    if (overUsd || overTokens) throw monthlyBudgetError(month);
  }

  const key = await trx
    .updateTable("keys")
    .set((eb) => ({ held_nano: eb("held_nano", "+", amount), held_tokens: eb("held_tokens", "+", tokens) }))
    .where("id", "=", request.keyId)
    .where("account_id", "=", request.accountId)
    .where("status", "=", "enabled")
    .where(sql<boolean>`(budget_cap_nano is null or spent_nano + held_nano + ${amount} <= budget_cap_nano)`)
    .where(sql<boolean>`(token_cap is null or tokens_used + held_tokens + ${tokens} <= token_cap)`)
    .returning("id")
    .executeTakeFirst();
  if (!key) throw await diagnoseKey(trx, request, amount, tokens);

  const id = newId("hold");
  await trx
    .insertInto("holds")
    .values({
      id,
      account_id: request.accountId,
      key_id: request.keyId,
      request_id: request.requestId,
      amount_nano: amount,
      tokens,
      created_at: BigInt(r.now),
      expires_at: BigInt(r.now + r.ttlMs),
    })
    .execute();

  return {
    id,
    requestId: request.requestId,
    accountId: request.accountId,
    keyId: request.keyId,
    amount,
    tokens: r.tokens,
    model: request.model,
    route: request.route,
    ...(request.imageVariant !== undefined && { imageVariant: request.imageVariant }),
  };
}

async function monthUsage(trx: Transaction<Database>, accountId: string, month: string): Promise<{ cost: bigint; tokens: bigint }> {
  const row = await trx
    .selectFrom("monthly_usage")
    .select(["cost_nano", "tokens"])
    .where("account_id", "=", accountId)
    .where("month", "=", month)
    .executeTakeFirst();
  return { cost: row?.cost_nano ?? 0n, tokens: row?.tokens ?? 0n };
}

/** The first day of the month after `month` ("YYYY-MM"), as an ISO timestamp in UTC. */
export function nextMonthStart(month: string): string {
  const [year, mon] = month.split("-").map(Number) as [number, number];
  return new Date(Date.UTC(year, mon, 1)).toISOString();
}

function monthlyBudgetError(month: string): GatewayError {
  return new GatewayError(
    "quota_exceeded",
    `The account's monthly budget for ${month} (UTC) is used up. Requests are blocked until the next month begins at ${nextMonthStart(month)}.`,
    { code: "monthly_budget_exceeded" },
  );
}

async function diagnoseAccount(trx: Transaction<Database>, accountId: string, amount: Nano, tokens: bigint, month: string): Promise<GatewayError> {
  const row = await trx
    .selectFrom("accounts")
    .select(["status", "balance_nano", "held_nano", "held_tokens", "monthly_budget_nano", "monthly_token_budget"])
    .where("id", "=", accountId)
    .executeTakeFirst();
  if (!row) return new GatewayError("auth_error", "The key's account does not exist.");
  if (row.status !== "active") return new GatewayError("account_suspended", `The account is ${row.status}.`);
  if (row.monthly_budget_nano !== null || row.monthly_token_budget !== null) {
    const used = await monthUsage(trx, accountId, month);
    if (
      (row.monthly_budget_nano !== null && used.cost + row.held_nano + amount > row.monthly_budget_nano) ||
      (row.monthly_token_budget !== null && used.tokens + row.held_tokens + tokens > row.monthly_token_budget)
    ) {
      return monthlyBudgetError(month);
    }
  }
  // Also the answer when a concurrent release freed room after the UPDATE's check: it was true then.
  const available = row.balance_nano - row.held_nano;
  return new GatewayError(
    "quota_exceeded",
    `The balance available (${formatUsd(available > 0n ? available : 0n)} USD) does not cover this request's projected cost of ${formatUsd(amount)} USD.`,
    { code: "insufficient_balance" },
  );
}

async function diagnoseKey(trx: Transaction<Database>, request: AdmissionRequest, amount: Nano, tokens: bigint): Promise<GatewayError> {
  const row = await trx
    .selectFrom("keys")
    .select(["account_id", "status", "budget_cap_nano", "spent_nano", "held_nano", "token_cap", "tokens_used", "held_tokens"])
    .where("id", "=", request.keyId)
    .executeTakeFirst();
  if (!row || row.account_id !== request.accountId || row.status === "revoked") return new GatewayError("auth_error");
  const budget = new GatewayError("key_budget_exceeded");
  const tokenCap = new GatewayError("key_token_cap_exceeded");
  if (row.status === "exhausted") {
    if (row.budget_cap_nano !== null && row.spent_nano >= row.budget_cap_nano) return budget;
    if (row.token_cap !== null && row.tokens_used >= row.token_cap) return tokenCap;
    return budget;
  }
  if (row.budget_cap_nano !== null && row.spent_nano + row.held_nano + amount > row.budget_cap_nano) return budget;
  if (row.token_cap !== null && row.tokens_used + row.held_tokens + tokens > row.token_cap) return tokenCap;
  return budget;
}
