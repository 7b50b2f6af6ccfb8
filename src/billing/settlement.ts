// Settlement: ONE transaction replaces a request's hold with its actual charge.
//
// Statements, in lock order (account row before key row, as in admission: no deadlocks):
//   1. delete the hold row, returning what it reserved (nothing when the sweeper already released it:
//      then its reservation was already given back and only the charge remains to apply);
//   2. read the balance, locking the account row on PostgreSQL (SQLite holds the write lock since 1);
//   3. accounts: balance -= charge, total_spent += cost, held -= reservation;
//   4. keys: spent += cost, tokens_used += tokens, held -= reservation, enabled -> exhausted at a cap;
//   5. monthly_usage upsert for the settlement's UTC month;
//   6. the ledger row, INSERT ... ON CONFLICT (request_id) DO NOTHING. ledger.request_id is UNIQUE, so
//      a second settlement of one request inserts nothing; the transaction is then rolled back and the
//      caller gets recorded=false with the first charge. That check runs last because the ledger row
//      (append-only) must already carry the shortfall note computed in step 2.
//
// Over-balance policy: the actual cost can exceed the hold (output longer than projected, a hold the
// sweeper released). The balance may not go below 0.00 (SPEC, and a CHECK constraint), and a charge is
// never silently lost. So the FULL cost is recorded — ledger cost_nano, total_spent, key spent,
// monthly usage — while the balance is clamped at 0 and the uncollected part is written in the ledger
// row's note ("shortfall_nano=..."), so the debt is auditable and an administrator can collect it.
//
// Any failure rolls the whole transaction back (nothing changed, the hold stays for a retry or the
// sweeper) and surfaces as 502 ledger_write_failed.
import { sql, type Transaction } from "kysely";
import { monthOf } from "../core/ids.js";
import type { Nano } from "../core/money.js";
import { totalTokens, type Usage } from "../core/usage.js";
import type { Dialect } from "../store/dialect.js";
import type { Database, KeyStatus } from "../store/tables.js";
import type { Hold } from "./types.js";

export interface SettlementInput {
  hold: Hold;
  usage: Usage;
  provider: string;
  cost: Nano;
  now: number;
}

/** Thrown inside the transaction to roll back a replayed settlement. */
export class AlreadySettled extends Error {
  override name = "AlreadySettled";
}

export async function applySettlement(trx: Transaction<Database>, dialect: Dialect, input: SettlementInput): Promise<void> {
  const { hold, usage, cost } = input;
  const tokens = BigInt(totalTokens(usage));
  const now = BigInt(input.now);

  const released = await trx.deleteFrom("holds").where("id", "=", hold.id).returning(["amount_nano", "tokens"]).executeTakeFirst();
  const heldAmount = released?.amount_nano ?? 0n;
  const heldTokens = released?.tokens ?? 0n;

  let balanceQuery = trx.selectFrom("accounts").select("balance_nano").where("id", "=", hold.accountId);
  if (dialect === "postgres") balanceQuery = balanceQuery.forUpdate();
  const account = await balanceQuery.executeTakeFirst();
  if (!account) throw new Error(`account ${hold.accountId} does not exist`);
  const collected = account.balance_nano < cost ? account.balance_nano : cost;
  const shortfall = cost - collected;

  await trx
    .updateTable("accounts")
    .set((eb) => ({
      balance_nano: eb("balance_nano", "-", collected),
      total_spent_nano: eb("total_spent_nano", "+", cost),
      held_nano: eb("held_nano", "-", heldAmount),
      held_tokens: eb("held_tokens", "-", heldTokens),
    }))
    .where("id", "=", hold.accountId)
    .execute();

  // SET expressions all read the row as it was before this UPDATE, hence "spent_nano + cost".
  await trx
    .updateTable("keys")
    .set((eb) => ({
      spent_nano: eb("spent_nano", "+", cost),
      tokens_used: eb("tokens_used", "+", tokens),
      held_nano: eb("held_nano", "-", heldAmount),
      held_tokens: eb("held_tokens", "-", heldTokens),
      last_used_at: now,
      status: sql<KeyStatus>`case when status = 'enabled' and (
          (budget_cap_nano is not null and spent_nano + ${cost} >= budget_cap_nano) or
          (token_cap is not null and tokens_used + ${tokens} >= token_cap)
        ) then 'exhausted' else status end`,
    }))
    .where("id", "=", hold.keyId)
    .execute();

  await trx
    .insertInto("monthly_usage")
    .values({ account_id: hold.accountId, month: monthOf(input.now), cost_nano: cost, tokens, requests: 1n })
    .onConflict((oc) =>
      oc.columns(["account_id", "month"]).doUpdateSet((eb) => ({
        cost_nano: eb("monthly_usage.cost_nano", "+", eb.ref("excluded.cost_nano")),
        tokens: eb("monthly_usage.tokens", "+", eb.ref("excluded.tokens")),
        requests: eb("monthly_usage.requests", "+", eb.ref("excluded.requests")),
      })),
    )
    .execute();

  const inserted = await trx
    .insertInto("ledger")
    .values({
      created_at: now,
      account_id: hold.accountId,
      key_id: hold.keyId,
      request_id: hold.requestId,
      kind: "usage",
      model: hold.model.id,
      provider: input.provider,
      route: hold.route,
      input_tokens: BigInt(usage.inputTokens),
      cached_tokens: BigInt(usage.cachedInputTokens),
      output_tokens: BigInt(usage.outputTokens),
      reasoning_tokens: BigInt(usage.reasoningTokens),
      cost_nano: cost,
      estimated: usage.estimated ? 1n : 0n,
      note: shortfall > 0n ? `shortfall_nano=${shortfall}` : null,
    })
    .onConflict((oc) => oc.column("request_id").doNothing())
    .returning("id")
    .executeTakeFirst();
  if (!inserted) throw new AlreadySettled(hold.requestId);
}
