// Settlement: ONE transaction replaces a request's hold with its actual charge.
//
// Statements, in lock order (account row before key row, as in admission: no deadlocks):
//   1. delete the hold row, returning what it reserved (nothing when the sweeper already released it:
//      then its reservation was already given back and only the charge remains to apply);
//   2. read the balance, locking the account row on PostgreSQL (SQLite holds the write lock since 1);
//   3. accounts: balance -= charge, total_spent += cost, held -= reservation;
//   4. keys: spent += cost, tokens_used += tokens, held -= reservation, enabled -> exhausted at a cap;
//      the periodic counters (migration 0013) += cost and tokens, or start afresh at cost and tokens
//      when they belong to an earlier period (a request admitted before a reset and settled after it
//      counts in the new period); a periodic budget never exhausts the key;
//   5. monthly_usage upsert for the settlement's UTC month;
//   6. the ledger row, INSERT ... ON CONFLICT (request_id) DO NOTHING. ledger.request_id is UNIQUE, so
//      a second settlement of one request inserts nothing; the transaction is then rolled back and the
//      caller gets recorded=false with the first charge. That check runs last because the ledger row
//      (append-only) must already carry the shortfall note computed in step 2.
//
// Over-balance policy: the actual cost can exceed the hold (output longer than projected, a hold the
// sweeper released). The balance may not go below 0.00 (the contract, and a CHECK constraint), and a charge is
// never silently lost. So the FULL cost is recorded — ledger cost_nano, total_spent, key spent,
// monthly usage — while the balance is clamped at 0 and the uncollected part is written in the ledger
// row's note ("shortfall_nano=..."), so the debt is auditable and an administrator can collect it.
//
// Any failure rolls the whole transaction back (nothing changed, the hold stays for a retry or the
// sweeper) and surfaces as 502 ledger_write_failed.
//
// Two implementations, one per database (this file holds what they share):
// - settlement-sqlite.ts: precompiled SQL, one operation of the write batcher (group commit). The
//   ledger INSERT comes second and computes the shortfall note from the balance in the same statement
//   (INSERT … SELECT … FROM accounts), so a replay is answered before anything else is written; the
//   account UPDATE clamps with min(balance, cost); the key's exhaustion is its own UPDATE (see there).
// - settlement-postgres.ts: one settle operation of the PL/pgSQL function gw_batch in autocommit:
//   the same steps in one round trip, with the ledger INSERT moved right after the account row lock,
//   so a replay returns before writing anything (when it must undo its hold deletion it raises
//   SQLSTATE GW409 and the call rolls back whole). A failure anywhere rolls the call back whole.
import { monthOf } from "../core/ids.js";
import type { Nano } from "../core/money.js";
import { totalTokens, type Usage } from "../core/usage.js";
import { periodStarts, type PeriodStarts } from "./key-period.js";
import { CACHE_SAVING_COLUMN, type DimensionSet } from "../core/dimensions.js";
import type { PriceBreakdown } from "./pricing.js";
import type { Hold } from "./types.js";
import type { ModelConfig } from "../core/catalog.js";
import type { LedgerChainState } from "../store/ledger-chain-key.js";

/** What settlement reads of a hold: all a writer in another process needs (the model's config stays behind). */
export type SettledHold = Pick<Hold, "id" | "requestId" | "accountId" | "keyId" | "route" | "attempts" | "budgets" | "tags"> & {
  model: Pick<ModelConfig, "id" | "deployment" | "priceFactorPpm">;
};

/** A settlement's inputs without the writing process's own dimensions and chain: what travels to the SQLite writer owner (ADR 0047). */
export type SettlementCore = Omit<SettlementInput, "hold" | "dimensions" | "chain"> & { hold: SettledHold };

/** The inputs the statements use: a settlement core and the dimensions and chain of the process that writes. */
export type SettlementWrite = SettlementCore & Pick<SettlementInput, "dimensions" | "chain">;

export interface SettlementInput {
  hold: Hold;
  usage: Usage;
  provider: string;
  /** breakdown.cost. */
  cost: Nano;
  /** The usage priced per dimension: the ledger row's per-dimension counts and costs. */
  breakdown: PriceBreakdown;
  now: number;
  /** The database's dimensions (DatabaseHandle.dimensions): the ledger columns written. */
  dimensions: DimensionSet;
  /** How this process seals a ledger row's hash (DatabaseHandle.ledgerChain; SQLite settlement hashes the row itself). */
  chain: Pick<LedgerChainState, "seal">;
}

/** Thrown inside the transaction to roll back a replayed settlement. */
export class AlreadySettled extends Error {
  override name = "AlreadySettled";
  /** The cost the first settlement recorded, when the replay already read it. */
  readonly recordedCost: Nano | undefined;
  constructor(requestId: string, recordedCost?: Nano) {
    super(requestId);
    this.recordedCost = recordedCost;
  }
}

/** The values both implementations write, computed once in TypeScript. */
export interface SettlementValues {
  tokens: bigint;
  now: bigint;
  month: string;
  inputTokens: bigint;
  cachedTokens: bigint;
  outputTokens: bigint;
  reasoningTokens: bigint;
  estimated: bigint;
  /** The values of the dimension set's ledgerColumns, in that order. */
  dimensionValues: bigint[];
  /** Upstream attempts (the ledger's attempts column); null when the caller did not count them. */
  attempts: bigint | null;
  /** The tier's price factor in millionths (the ledger's price_factor_ppm, migration 0026); null: list prices. */
  priceFactorPpm: bigint | null;
  /** The current period of each kind at `now`: the key's periodic counters are charged to its own. */
  periods: PeriodStarts;
}

type ColumnReader = (breakdown: PriceBreakdown) => bigint;
const columnReaders = new WeakMap<DimensionSet, readonly ColumnReader[]>();

/** How to read each of the set's ledger columns from a priced usage, in that order; resolved once per set. */
function readersOf(dimensions: DimensionSet): readonly ColumnReader[] {
  let readers = columnReaders.get(dimensions);
  if (readers === undefined) {
    readers = dimensions.ledgerColumns.map((column): ColumnReader => {
      if (column === CACHE_SAVING_COLUMN) return (breakdown) => breakdown.cacheSaving;
      const costOf = dimensions.list.find((d) => d.costColumn === column);
      if (costOf) return (breakdown) => breakdown.costs[costOf.name]!;
      const countOf = dimensions.list.find((d) => d.countColumn === column);
      if (countOf) return (breakdown) => breakdown.counts[countOf.name]!;
      throw new Error(`no value for the ledger column ${column}`);
    });
    columnReaders.set(dimensions, readers);
  }
  return readers;
}

/** The value of each of the set's ledger columns for a priced usage, in that order. */
function ledgerDimensionValues(breakdown: PriceBreakdown, dimensions: DimensionSet): bigint[] {
  const readers = readersOf(dimensions);
  const values: bigint[] = new Array<bigint>(readers.length);
  for (let i = 0; i < values.length; i++) values[i] = readers[i]!(breakdown);
  return values;
}

/** The set's ledger columns by name with their values for a priced usage (a row written outside settlement: the operator's key tests). */
export function ledgerDimensionColumns(breakdown: PriceBreakdown, dimensions: DimensionSet): Record<string, bigint> {
  const values = ledgerDimensionValues(breakdown, dimensions);
  return Object.fromEntries(dimensions.ledgerColumns.map((column, i) => [column, values[i]!]));
}

export function settlementValues(input: SettlementWrite): SettlementValues {
  const { usage } = input;
  return {
    tokens: BigInt(totalTokens(usage)),
    now: BigInt(input.now),
    month: monthOf(input.now),
    inputTokens: BigInt(usage.inputTokens),
    cachedTokens: BigInt(usage.cachedInputTokens),
    outputTokens: BigInt(usage.outputTokens),
    reasoningTokens: BigInt(usage.reasoningTokens),
    estimated: usage.estimated ? 1n : 0n,
    dimensionValues: ledgerDimensionValues(input.breakdown, input.dimensions),
    attempts: input.hold.attempts === undefined ? null : BigInt(input.hold.attempts),
    priceFactorPpm: input.hold.model.priceFactorPpm === undefined ? null : BigInt(input.hold.model.priceFactorPpm),
    periods: periodStarts(input.now),
  };
}
