// Settlement on PostgreSQL: one settle operation of gw_batch (src/store/gw-batch-function.ts,
// arguments listed there), sent in a group-commit batch by postgres-batcher.ts (one statement in autocommit): delete the hold, lock
// the account row, append the ledger row (idempotent by request id), then account, key and monthly
// usage. The call is atomic: an error raised anywhere inside (a trigger, a CHECK) rolls back all of it
// (the batcher then runs it again alone to get its own error), which the caller reports as 502
// ledger_write_failed. A replay answers recorded=false with the cost recorded first; SQLSTATE GW409 is
// the same answer from a replay that had to roll back its own hold deletion.
import { ALREADY_SETTLED_SQLSTATE } from "../store/gw-batch-function.js";
import type { PgAnswer, PostgresBatcher } from "./postgres-batcher.js";
import { AlreadySettled, settlementValues, type SettlementInput } from "./settlement.js";

/** Applies the settlement; throws AlreadySettled (with the recorded cost, when known) on a replay. */
export async function applySettlementPostgres(batcher: PostgresBatcher, input: SettlementInput): Promise<void> {
  const { hold, cost } = input;
  const v = settlementValues(input);
  let row: PgAnswer;
  try {
    row = await batcher.call(
      "settle",
      [
        hold.id,
        hold.accountId,
        hold.keyId,
        hold.requestId,
        cost,
        v.tokens,
        v.now,
        v.month,
        hold.model.id,
        input.provider,
        hold.route,
        v.inputTokens,
        v.cachedTokens,
        v.outputTokens,
        v.reasoningTokens,
        v.estimated,
        hold.model.deployment ?? null,
        ...v.dimensionValues,
        v.attempts,
        v.periods.day,
        v.periods.week,
        v.periods.month,
      ],
      hold.accountId,
      hold.keyId,
    );
  } catch (error) {
    if (sqlState(error) === ALREADY_SETTLED_SQLSTATE) throw new AlreadySettled(hold.requestId);
    throw error;
  }
  if (row.recorded === true) return;
  if (row.recorded === false) throw new AlreadySettled(hold.requestId, typeof row.cost === "string" ? BigInt(row.cost) : undefined);
  throw new Error(`gw_settle answered ${JSON.stringify(row)}`);
}

function sqlState(error: unknown): string {
  return typeof error === "object" && error !== null ? String((error as { code?: unknown }).code ?? "") : "";
}
