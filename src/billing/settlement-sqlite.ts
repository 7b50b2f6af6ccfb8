// Settlement on SQLite: the steps of settlement.ts as precompiled SQL, run as one operation of the write
// batcher (sqlite-writer.ts). Seven statements; the ledger row comes right after the hold, so that a
// replay is answered before anything else is written:
//   1. delete the hold, returning its reservation (nothing when the sweeper already released it);
//   2. read the account's balance and ledger_head (SQLite holds the batch's write lock from BEGIN
//      IMMEDIATE, so neither can change before step 4);
//   3. the ledger row, with its shortfall note and its chain hash (ledger-chain.ts) computed here from
//      step 2, sealed with the chain's key when it is keyed (ledger-chain-key.ts). A row for the request id already there is a replay: migration 0005's trigger refuses
//      the insert before its ON CONFLICT DO NOTHING is reached (it aborts that statement only) and
//      insertLedgerRow reads that refusal as "not inserted";
//   4. accounts: balance -= min(balance, cost) (clamped at 0: the over-balance policy), total_spent +=
//      cost, held -= reservation, ledger_head = the new row's hash;  5. keys, then 6. their exhaustion
//      at a cap;  7. monthly_usage upsert.
// The hash is computed here, not by the chain trigger that covers every other insert (it skips a row
// that comes with its hash): the trigger's second UPDATE of the new row and of the account cost ~16 µs
// per settlement against ~5 µs here (ADR 0011).
// A replay (the ledger row exists) is answered as a value, AlreadySettled returned and not thrown, when
// it wrote nothing; when step 1 did delete a hold it throws, so the batcher rolls it back. A failure
// (a trigger, a CHECK, no such account) throws: nothing of it remains, 502 ledger_write_failed.
import { dbErrorKind, dbErrorMessage, LEDGER_ROW_EXISTS } from "../store/db-errors.js";
import type { DimensionSet } from "../core/dimensions.js";
import { ledgerChainColumns, ledgerRowHashFromValues, type LedgerChainColumn } from "../store/ledger-chain.js";
import { AlreadySettled, settlementValues, type SettlementWrite } from "./settlement.js";
import { endTrafficSqlite } from "./holds.js";
import { chargeBudgetsSqlite } from "./budgets-sqlite.js";
import { Statement, type SqlExec } from "../store/sqlite-writer.js";

const DELETE_HOLD = new Statement<{ amount_nano: bigint; tokens: bigint; traffic: string | null }>(`delete from holds where id = ? returning amount_nano, tokens, traffic`);

const ACCOUNT_FOR_LEDGER = new Statement<{ balance_nano: bigint; ledger_head: string | null }>(`select balance_nano, ledger_head from accounts where id = ?`);

/** The columns settlement fills from the hold and the usage: the first of the chain's, in its order. */
const BASE_ROW_COLUMNS = [
  "created_at",
  "account_id",
  "key_id",
  "request_id",
  "kind",
  "model",
  "provider",
  "route",
  "input_tokens",
  "cached_tokens",
  "output_tokens",
  "reasoning_tokens",
  "cost_nano",
  "estimated",
  "note",
  "deployment",
];

/** How a dimension set's ledger row is written: the chain's columns (ledger-chain.ts) and the INSERT of them. */
interface LedgerRowLayout {
  readonly chained: readonly LedgerChainColumn[];
  /** Parameters: the row's values in `chained` order (what its hash covers), then the hash. */
  readonly insert: Statement<{ id: bigint }>;
  /** For each chained column after BASE_ROW_COLUMNS: its index in SettlementValues.dimensionValues, -1 for attempts, -2 for price_factor_ppm. */
  readonly tail: readonly number[];
}

const layouts = new WeakMap<DimensionSet, LedgerRowLayout>();

function layoutOf(dimensions: DimensionSet): LedgerRowLayout {
  let layout = layouts.get(dimensions);
  if (layout === undefined) {
    const chained = ledgerChainColumns(dimensions);
    if (BASE_ROW_COLUMNS.some((name, i) => chained[i]?.name !== name)) throw new Error("the ledger chain does not start with the settlement's base columns");
    const tail = chained.slice(BASE_ROW_COLUMNS.length).map(({ name }) => {
      if (name === "attempts") return -1;
      if (name === "price_factor_ppm") return -2;
      const index = dimensions.ledgerColumns.indexOf(name);
      if (index < 0) throw new Error(`no settlement value for the ledger column ${name}`);
      return index;
    });
    const insert = new Statement<{ id: bigint }>(`
      insert into ledger (${chained.map((column) => column.name).join(", ")}, hash)
      values (${chained.map(() => "?").join(", ")}, ?)
      on conflict (request_id) do nothing
      returning id`);
    layouts.set(dimensions, (layout = { chained, insert, tail }));
  }
  return layout;
}

const RECORDED_COST = new Statement<{ cost_nano: bigint }>(`select cost_nano from ledger where request_id = ?`);

// Parameters: cost, cost, held amount, held tokens, the new ledger row's hash, account id.
const CHARGE_ACCOUNT = new Statement<never>(`
  update accounts set balance_nano = balance_nano - min(balance_nano, ?), total_spent_nano = total_spent_nano + ?,
    held_nano = held_nano - ?, held_tokens = held_tokens - ?, ledger_head = ?
  where id = ?`);

// The start of the key's current period, from the three starts passed (day, week, month).
const CURRENT_PERIOD_START = `(case period when 'day' then ? when 'week' then ? else ? end)`;

// Parameters: cost, tokens, held amount, held tokens, now, then the period starts (day, week, month)
// and cost twice, the period starts and tokens twice, the period starts, then the key id. The periodic counters
// (migration 0013) add up within the current period and start afresh in a new one; a key without a
// period keeps them as they are. Every SET expression reads the row as it was before the UPDATE.
const CHARGE_KEY = new Statement<never>(`
  update keys set spent_nano = spent_nano + ?, tokens_used = tokens_used + ?,
    held_nano = held_nano - ?, held_tokens = held_tokens - ?, last_used_at = ?,
    period_spent_nano = case when period is null then period_spent_nano
      when period_started_at >= ${CURRENT_PERIOD_START} then period_spent_nano + ? else ? end,
    period_tokens_used = case when period is null then period_tokens_used
      when period_started_at >= ${CURRENT_PERIOD_START} then period_tokens_used + ? else ? end,
    period_started_at = case when period is null then period_started_at else max(period_started_at, ${CURRENT_PERIOD_START}) end
  where id = ?`);

// After CHARGE_KEY, on the new totals; changes a row only when a cap is reached. Not a CASE in
// CHARGE_KEY: a SET that names status rewrites the keys_account_status index entry on every
// settlement, changed or not (one more WAL page per request, measured: 2 frames against 1).
const EXHAUST_KEY = new Statement<never>(`
  update keys set status = 'exhausted'
  where id = ? and status = 'enabled' and (
    (budget_cap_nano is not null and spent_nano >= budget_cap_nano) or
    (token_cap is not null and tokens_used >= token_cap))`);

// Parameters: ledger id, tag, account id, created at, cost, tokens: one row per tag of the request (migration 0030).
const INSERT_LEDGER_TAG = new Statement<never>(`insert into ledger_tags (ledger_id, tag, account_id, created_at, cost_nano, tokens) values (?, ?, ?, ?, ?, ?)`);

const ADD_MONTHLY_USAGE = new Statement<never>(`
  insert into monthly_usage (account_id, month, cost_nano, tokens, requests) values (?, ?, ?, ?, 1)
  on conflict (account_id, month) do update set
    cost_nano = monthly_usage.cost_nano + excluded.cost_nano,
    tokens = monthly_usage.tokens + excluded.tokens,
    requests = monthly_usage.requests + excluded.requests`);

/** The new row's id; undefined when the request id is already recorded (or the account is missing). */
function insertLedgerRow(exec: SqlExec, layout: LedgerRowLayout, rowAndHash: readonly unknown[]): { id: bigint } | undefined {
  try {
    return layout.insert.first(exec, rowAndHash);
  } catch (error) {
    if (dbErrorKind(error) === "trigger" && dbErrorMessage(error) === LEDGER_ROW_EXISTS) return undefined;
    throw error;
  }
}

/** Undefined when recorded; an AlreadySettled (returned, not thrown) for a replay that changed nothing. */
export function applySettlementSqlite(exec: SqlExec, input: SettlementWrite): AlreadySettled | undefined {
  const { hold, cost } = input;
  const v = settlementValues(input);

  const released = DELETE_HOLD.first(exec, [hold.id]);
  const account = ACCOUNT_FOR_LEDGER.first(exec, [hold.accountId]);
  let hash: string | undefined;
  let inserted: { id: bigint } | undefined;
  if (account) {
    // The row in the chain's order (ledger-chain.ts): the base columns, then the dimension columns, attempts and the price factor.
    const layout = layoutOf(input.dimensions);
    const row: unknown[] = [
      v.now,
      hold.accountId,
      hold.keyId,
      hold.requestId,
      "usage",
      hold.model.id,
      input.provider,
      hold.route,
      v.inputTokens,
      v.cachedTokens,
      v.outputTokens,
      v.reasoningTokens,
      cost,
      v.estimated,
      account.balance_nano < cost ? `shortfall_nano=${cost - account.balance_nano}` : null,
      hold.model.deployment ?? null,
    ];
    for (const index of layout.tail) row.push(index === -1 ? v.attempts : index === -2 ? v.priceFactorPpm : v.dimensionValues[index]);
    hash = input.chain.seal(ledgerRowHashFromValues(account.ledger_head, row, layout.chained));
    row.push(hash);
    inserted = insertLedgerRow(exec, layout, row);
  }
  if (!inserted) {
    const recorded = RECORDED_COST.first(exec, [hold.requestId]);
    if (!recorded) throw new Error(`account ${hold.accountId} does not exist`);
    const replay = new AlreadySettled(hold.requestId, recorded.cost_nano);
    if (released) throw replay; // undo the hold deletion: the batcher rolls this operation back
    return replay;
  }

  if (hold.tags !== undefined) for (const tag of hold.tags) INSERT_LEDGER_TAG.changes(exec, [inserted.id, tag, hold.accountId, v.now, cost, v.tokens]);
  const heldAmount = released?.amount_nano ?? 0n;
  const heldTokens = released?.tokens ?? 0n;
  CHARGE_ACCOUNT.changes(exec, [cost, cost, heldAmount, heldTokens, hash, hold.accountId]);
  const { day, week, month } = v.periods;
  CHARGE_KEY.changes(exec, [cost, v.tokens, heldAmount, heldTokens, v.now, day, week, month, cost, cost, day, week, month, v.tokens, v.tokens, day, week, month, hold.keyId]);
  EXHAUST_KEY.changes(exec, [hold.keyId]);
  ADD_MONTHLY_USAGE.changes(exec, [hold.accountId, v.month, cost, v.tokens]);
  // The budget scopes (ADR 0037), as the account's monthly usage: the cost to the settlement's month, the hold given back.
  if (hold.budgets !== undefined && hold.budgets.length > 0) chargeBudgetsSqlite(exec, hold.budgets, v.month, cost, v.tokens, heldAmount, heldTokens);
  // 8. The hold's traffic limits: slot freed, tokens corrected to the actual count (traffic-limits.ts).
  endTrafficSqlite(exec, released?.traffic ?? null, v.tokens);
  return undefined;
}
