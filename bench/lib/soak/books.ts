// The soak's end checks on the database, after the drain: no hold left behind, and the ledger exact
// against the client's own records. A successful request's usage row costs exactly what the client
// was told (x-gateway-cost-usd or the in-band usage cost); a failed one (upstream 5xx, revoked key)
// has none; a cancelled stream is charged what was delivered (docs/billing.md), which the client
// never sees, so it is left out of the exact sum and only checked for at most one row.
import type { Store } from "../../../src/store/index.js";
import { sleep } from "../procs.js";
import type { SoakOutcome } from "./traffic.js";

export interface BooksCheck {
  holdsLeft: number;
  /** Milliseconds the holds took to go after the drain (cancelled streams settle asynchronously). */
  holdsClearedAfterMs: number;
  accountHeldNano: bigint;
  okRequests: number;
  clientTotalNano: bigint;
  ledgerTotalForOkNano: bigint;
  /** Successful requests whose usage row is missing or costs another amount than the client saw. */
  mismatches: string[];
  /** Failed requests with a usage row (nothing may be charged for an error). */
  chargedFailures: string[];
  /** Request ids with more than one usage row. */
  duplicates: string[];
  cancelled: number;
  cancelledCharged: number;
  /** The account's balance went down by exactly the sum of its usage rows. */
  balanceMatchesLedger: boolean;
  exact: boolean;
}

export async function checkBooks(store: Store, accountId: string, outcomes: SoakOutcome[], startBalance: bigint): Promise<BooksCheck> {
  const started = Date.now();
  let holdsLeft = 0;
  for (;;) {
    holdsLeft = (await store.db.selectFrom("holds").select("id").where("account_id", "=", accountId).execute()).length;
    if (holdsLeft === 0 || Date.now() - started > 20_000) break;
    await sleep(250);
  }
  const holdsClearedAfterMs = Date.now() - started;
  const rows = await store.db.selectFrom("ledger").select(["request_id", "cost_nano"]).where("account_id", "=", accountId).where("kind", "=", "usage").execute();
  const charged = new Map<string, bigint[]>();
  let ledgerTotal = 0n;
  for (const row of rows) {
    const cost = BigInt(row.cost_nano);
    ledgerTotal += cost;
    const list = charged.get(row.request_id) ?? [];
    list.push(cost);
    charged.set(row.request_id, list);
  }
  const duplicates = [...charged].filter(([, costs]) => costs.length > 1).map(([id]) => id);
  const mismatches: string[] = [];
  const chargedFailures: string[] = [];
  let clientTotal = 0n;
  let ledgerTotalForOk = 0n;
  let okRequests = 0;
  let cancelled = 0;
  let cancelledCharged = 0;
  for (const o of outcomes) {
    const costs = o.requestId ? (charged.get(o.requestId) ?? []) : [];
    if (o.outcome === "ok") {
      okRequests += 1;
      clientTotal += o.costNano ?? 0n;
      ledgerTotalForOk += costs.reduce((s, c) => s + c, 0n);
      if (costs.length !== 1 || costs[0] !== o.costNano) mismatches.push(`${o.kind} ${o.requestId}: client ${o.costNano}, ledger [${costs.join(", ")}]`);
    } else if (o.outcome === "failed") {
      if (costs.length > 0) chargedFailures.push(`${o.kind} ${o.requestId}`);
    } else if (o.outcome === "cancelled") {
      cancelled += 1;
      if (costs.length > 0) cancelledCharged += 1;
    }
  }
  const account = await store.accounts.get(accountId);
  const balanceMatchesLedger = account !== null && startBalance - account.balance === ledgerTotal && account.totalSpent === ledgerTotal;
  return {
    holdsLeft,
    holdsClearedAfterMs,
    accountHeldNano: account?.held ?? -1n,
    okRequests,
    clientTotalNano: clientTotal,
    ledgerTotalForOkNano: ledgerTotalForOk,
    mismatches,
    chargedFailures,
    duplicates,
    cancelled,
    cancelledCharged,
    balanceMatchesLedger,
    exact: mismatches.length === 0 && chargedFailures.length === 0 && duplicates.length === 0 && clientTotal === ledgerTotalForOk && balanceMatchesLedger,
  };
}
