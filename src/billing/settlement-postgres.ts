// Settlement on PostgreSQL: one settle operation of gw_batch (src/store/gw-batch-function.ts,
// its fields named there), sent in a group-commit batch by postgres-batcher.ts (one statement in autocommit): delete the hold, lock
// the account row, append the ledger row (idempotent by request id), then account, key and monthly
// usage. The call is atomic: an error raised anywhere inside (a trigger, a CHECK) rolls back all of it
// (the batcher then runs it again alone to get its own error), which the caller reports as 502
// ledger_write_failed. A replay answers recorded=false with the cost recorded first; SQLSTATE GW409 is
// the same answer from a replay that had to roll back its own hold deletion.
import { ALREADY_SETTLED_SQLSTATE } from "../store/gw-batch-function.js";
import { pgInteger, pgPeriods, type PgAnswer, type PgField, type PostgresBatcher } from "./postgres-batcher.js";
import { AlreadySettled, settlementValues, type SettlementInput } from "./settlement.js";

/** Applies the settlement; throws AlreadySettled (with the recorded cost, when known) on a replay. */
/** `escrow`: the fields of a hold admitted from a slice (escrow-postgres.ts); `observe` sees the answer. */
export async function applySettlementPostgres(
  batcher: PostgresBatcher,
  input: SettlementInput,
  escrow: Record<string, PgField> = {},
  observe?: (answer: PgAnswer) => void,
): Promise<void> {
  const { hold, cost } = input;
  const v = settlementValues(input);
  // The ledger row's own values by column name; gw_batch adds the account, key, request, cost and note.
  const row: Record<string, PgField> = {
    model: hold.model.id,
    provider: input.provider,
    route: hold.route,
    input_tokens: v.inputTokens.toString(),
    cached_tokens: v.cachedTokens.toString(),
    output_tokens: v.outputTokens.toString(),
    reasoning_tokens: v.reasoningTokens.toString(),
    estimated: v.estimated.toString(),
    deployment: hold.model.deployment ?? null,
    attempts: pgInteger(v.attempts),
    price_factor_ppm: pgInteger(v.priceFactorPpm),
  };
  const columns = input.dimensions.ledgerColumns;
  // Zeros are left out (gw_batch reads an absent column as 0): most of a row's, and each costs parsing.
  for (let i = 0; i < columns.length; i++) if (v.dimensionValues[i] !== 0n) row[columns[i]!] = v.dimensionValues[i]!.toString();
  let answer: PgAnswer;
  try {
    answer = await batcher.call(
      {
        k: "settle",
        hold: hold.id,
        account: hold.accountId,
        key: hold.keyId,
        request: hold.requestId,
        cost: cost.toString(),
        tokens: v.tokens.toString(),
        now: v.now.toString(),
        month: v.month,
        periods: pgPeriods(v.periods),
        row,
        ...(hold.budgets !== undefined && hold.budgets.length > 0 && { scopes: hold.budgets }),
        ...(hold.tags !== undefined && hold.tags.length > 0 && { tags: hold.tags }),
        ...escrow,
      },
      hold.accountId,
      hold.keyId,
    );
  } catch (error) {
    if (sqlState(error) === ALREADY_SETTLED_SQLSTATE) throw new AlreadySettled(hold.requestId);
    throw error;
  }
  observe?.(answer);
  if (answer.recorded === true) return;
  if (answer.recorded === false) throw new AlreadySettled(hold.requestId, typeof answer.cost === "string" ? BigInt(answer.cost) : undefined);
  throw new Error(`gw_settle answered ${JSON.stringify(answer)}`);
}

function sqlState(error: unknown): string {
  return typeof error === "object" && error !== null ? String((error as { code?: unknown }).code ?? "") : "";
}
