// The open-streams step's ledger check on our gateway, after the drain: every stream the client saw
// finish (warm-up included) has exactly one usage row, costing what its in-band usage frame told
// the client; no hold is left; rows for streams the client did not see finish (an error mid-stream
// is charged what was delivered, docs/billing.md) are counted apart.
import { parseUsd } from "../../../src/core/money.js";
import type { Store } from "../../../src/store/index.js";
import type { FinishedStream } from "../../load/streams-client.js";
import { sleep } from "../procs.js";

export interface StreamBooks {
  finishedStreams: number;
  ledgerRows: number;
  /** Finished streams with no usage row; with more than one; whose row costs another amount. */
  missing: number;
  duplicates: number;
  mismatches: string[];
  /** Finished streams whose last frame carried no cost (nothing to compare). */
  withoutCost: number;
  /** Usage rows of requests the client did not see finish. */
  otherRows: number;
  clientTotalNano: bigint;
  /** The usage rows of the finished streams; and all the account's usage rows. */
  ledgerFinishedNano: bigint;
  ledgerTotalNano: bigint;
  holdsLeft: number;
  exact: boolean;
}

export async function checkStreamBooks(store: Store, accountId: string, finished: FinishedStream[]): Promise<StreamBooks> {
  const started = Date.now();
  let holdsLeft = 0;
  for (;;) {
    holdsLeft = (await store.db.selectFrom("holds").select("id").where("account_id", "=", accountId).execute()).length;
    // A loaded gateway may still be settling: its event loop can lag by seconds.
    if (holdsLeft === 0 || Date.now() - started > 60_000) break;
    await sleep(250);
  }
  const rows = await store.db.selectFrom("ledger").select(["request_id", "cost_nano"]).where("account_id", "=", accountId).where("kind", "=", "usage").execute();
  const charged = new Map<string, bigint[]>();
  let ledgerTotal = 0n;
  for (const row of rows) {
    const cost = BigInt(row.cost_nano);
    ledgerTotal += cost;
    charged.set(row.request_id, [...(charged.get(row.request_id) ?? []), cost]);
  }
  let missing = 0;
  let duplicates = 0;
  let withoutCost = 0;
  let clientTotal = 0n;
  const mismatches: string[] = [];
  const seen = new Set<string>();
  for (const stream of finished) {
    const costs = stream.requestId ? (charged.get(stream.requestId) ?? []) : [];
    if (stream.requestId) seen.add(stream.requestId);
    if (costs.length === 0) missing += 1;
    if (costs.length > 1) duplicates += 1;
    const told = stream.cost === null ? null : (parseUsd(stream.cost) ?? null);
    if (told === null) {
      withoutCost += 1;
      continue;
    }
    clientTotal += told;
    if (costs.length === 1 && costs[0] !== told && mismatches.length < 5) mismatches.push(`${stream.requestId}: client ${told}, ledger ${costs[0]}`);
  }
  const otherRows = rows.filter((row) => !seen.has(row.request_id)).length;
  const ledgerForFinished = rows.filter((row) => seen.has(row.request_id)).reduce((sum, row) => sum + BigInt(row.cost_nano), 0n);
  return {
    finishedStreams: finished.length,
    ledgerRows: rows.length,
    missing,
    duplicates,
    mismatches,
    withoutCost,
    otherRows,
    clientTotalNano: clientTotal,
    ledgerFinishedNano: ledgerForFinished,
    ledgerTotalNano: ledgerTotal,
    holdsLeft,
    exact: missing === 0 && duplicates === 0 && mismatches.length === 0 && withoutCost === 0 && holdsLeft === 0 && clientTotal === ledgerForFinished,
  };
}
