// Settlement on SQLite: the steps of settlement.ts as precompiled SQL, run as one operation of the write
// batcher (sqlite-writer.ts). Six statements; the ledger row comes right after the hold, so that a
// replay is answered before anything else is written:
//   1. delete the hold, returning its reservation (nothing when the sweeper already released it);
//   2. the ledger row, INSERT … SELECT … FROM accounts: the shortfall note is computed from the balance
//      in the same statement (SQLite holds the batch's write lock from BEGIN IMMEDIATE, so the balance
//      cannot change before step 3). A row for the request id already there is a replay: migration
//      0005's trigger refuses the insert before its ON CONFLICT DO NOTHING is reached (it aborts that
//      statement only) and insertLedgerRow reads that refusal as "not inserted";
//   3. accounts: balance -= min(balance, cost) (clamped at 0: the over-balance policy), total_spent +=
//      cost, held -= reservation;  4. keys, then 5. their exhaustion at a cap;  6. monthly_usage upsert.
// A replay (the ledger row exists) is answered as a value, AlreadySettled returned and not thrown, when
// it wrote nothing; when step 1 did delete a hold it throws, so the batcher rolls it back. A failure
// (a trigger, a CHECK, no such account) throws: nothing of it remains, 502 ledger_write_failed.
import { dbErrorKind, dbErrorMessage } from "../store/db-errors.js";
import { LEDGER_ROW_EXISTS } from "../store/migrations/0005-ledger-append-only-gaps.js";
import { LEDGER_DIMENSION_COLUMNS } from "./dimensions.js";
import { AlreadySettled, settlementValues, type SettlementInput } from "./settlement.js";
import { Statement, type SqlExec } from "./sqlite-writer.js";

const DELETE_HOLD = new Statement<{ amount_nano: bigint; tokens: bigint }>(`delete from holds where id = ? returning amount_nano, tokens`);

// Parameters: created_at, key id, request id, model, provider, route, input, cached, output and
// reasoning tokens, cost, estimated, then cost, cost (the note), deployment, the values of
// LEDGER_DIMENSION_COLUMNS (dimensions.ts) in that order, account id.
const INSERT_LEDGER = new Statement<{ id: bigint }>(`
  insert into ledger (created_at, account_id, key_id, request_id, kind, model, provider, route,
    input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost_nano, estimated, note, deployment,
    ${LEDGER_DIMENSION_COLUMNS.join(", ")})
  select ?, id, ?, ?, 'usage', ?, ?, ?, ?, ?, ?, ?, ?, ?,
    case when balance_nano < ? then 'shortfall_nano=' || (? - balance_nano) end, ?,
    ${LEDGER_DIMENSION_COLUMNS.map(() => "?").join(", ")}
  from accounts where id = ?
  on conflict (request_id) do nothing
  returning id`);

const RECORDED_COST = new Statement<{ cost_nano: bigint }>(`select cost_nano from ledger where request_id = ?`);

// Parameters: cost, cost, held amount, held tokens, account id.
const CHARGE_ACCOUNT = new Statement<never>(`
  update accounts set balance_nano = balance_nano - min(balance_nano, ?), total_spent_nano = total_spent_nano + ?,
    held_nano = held_nano - ?, held_tokens = held_tokens - ?
  where id = ?`);

// Parameters: cost, tokens, held amount, held tokens, now, key id.
const CHARGE_KEY = new Statement<never>(`
  update keys set spent_nano = spent_nano + ?, tokens_used = tokens_used + ?,
    held_nano = held_nano - ?, held_tokens = held_tokens - ?, last_used_at = ?
  where id = ?`);

// After CHARGE_KEY, on the new totals; changes a row only when a cap is reached. Not a CASE in
// CHARGE_KEY: a SET that names status rewrites the keys_account_status index entry on every
// settlement, changed or not (one more WAL page per request, measured: 2 frames against 1).
const EXHAUST_KEY = new Statement<never>(`
  update keys set status = 'exhausted'
  where id = ? and status = 'enabled' and (
    (budget_cap_nano is not null and spent_nano >= budget_cap_nano) or
    (token_cap is not null and tokens_used >= token_cap))`);

const ADD_MONTHLY_USAGE = new Statement<never>(`
  insert into monthly_usage (account_id, month, cost_nano, tokens, requests) values (?, ?, ?, ?, 1)
  on conflict (account_id, month) do update set
    cost_nano = monthly_usage.cost_nano + excluded.cost_nano,
    tokens = monthly_usage.tokens + excluded.tokens,
    requests = monthly_usage.requests + excluded.requests`);

/** The new row's id; undefined when the request id is already recorded (or the account is missing). */
function insertLedgerRow(exec: SqlExec, parameters: readonly unknown[]): { id: bigint } | undefined {
  try {
    return INSERT_LEDGER.first(exec, parameters);
  } catch (error) {
    if (dbErrorKind(error) === "trigger" && dbErrorMessage(error) === LEDGER_ROW_EXISTS) return undefined;
    throw error;
  }
}

/** Undefined when recorded; an AlreadySettled (returned, not thrown) for a replay that changed nothing. */
export function applySettlementSqlite(exec: SqlExec, input: SettlementInput): AlreadySettled | undefined {
  const { hold, cost } = input;
  const v = settlementValues(input);

  const released = DELETE_HOLD.first(exec, [hold.id]);
  const inserted = insertLedgerRow(exec, [
    v.now,
    hold.keyId,
    hold.requestId,
    hold.model.id,
    input.provider,
    hold.route,
    v.inputTokens,
    v.cachedTokens,
    v.outputTokens,
    v.reasoningTokens,
    cost,
    v.estimated,
    cost,
    cost,
    hold.model.deployment ?? null,
    ...v.dimensionValues,
    hold.accountId,
  ]);
  if (!inserted) {
    const recorded = RECORDED_COST.first(exec, [hold.requestId]);
    if (!recorded) throw new Error(`account ${hold.accountId} does not exist`);
    const replay = new AlreadySettled(hold.requestId, recorded.cost_nano);
    if (released) throw replay; // undo the hold deletion: the batcher rolls this operation back
    return replay;
  }

  const heldAmount = released?.amount_nano ?? 0n;
  const heldTokens = released?.tokens ?? 0n;
  CHARGE_ACCOUNT.changes(exec, [cost, cost, heldAmount, heldTokens, hold.accountId]);
  CHARGE_KEY.changes(exec, [cost, v.tokens, heldAmount, heldTokens, v.now, hold.keyId]);
  EXHAUST_KEY.changes(exec, [hold.keyId]);
  ADD_MONTHLY_USAGE.changes(exec, [hold.accountId, v.month, cost, v.tokens]);
  return undefined;
}
