// What the client saw against what the database says: every answered request is one ledger row
// with the cost the answer reported, nothing else is charged, no hold is left, and the balance moved
// by exactly the ledger's sum.
import type { Store } from "../../../src/store/index.js";
import type { Attempt } from "./load-client.js";

export interface Books {
  /** request_id → cost_nano of each usage row, and how many rows each request id has. */
  usage: Map<string, { cost: bigint; rows: number }>;
  usageSum: bigint;
  holds: { requestId: string; amount: bigint }[];
  balance: bigint;
}

export async function readBooks(store: Store, accountId: string): Promise<Books> {
  const db = store.handle.db;
  const rows = await db.selectFrom("ledger").select(["request_id", "cost_nano"]).where("account_id", "=", accountId).where("kind", "=", "usage").execute();
  const usage = new Map<string, { cost: bigint; rows: number }>();
  let usageSum = 0n;
  for (const row of rows) {
    const cost = BigInt(row.cost_nano);
    usageSum += cost;
    const seen = usage.get(row.request_id);
    usage.set(row.request_id, { cost: (seen?.cost ?? 0n) + cost, rows: (seen?.rows ?? 0) + 1 });
  }
  const holds = (await db.selectFrom("holds").select(["request_id", "amount_nano"]).where("account_id", "=", accountId).execute()).map((hold) => ({
    requestId: hold.request_id,
    amount: BigInt(hold.amount_nano),
  }));
  const account = await store.accounts.get(accountId);
  if (!account) throw new Error(`account ${accountId} is gone`);
  return { usage, usageSum, holds, balance: account.balance };
}

/**
 * Waits (bounded) until at most `expectedLeft` holds of the account are left: those of requests a
 * killed host was serving, which only their expiry ends. Then reads the books.
 */
export async function settledBooks(store: Store, accountId: string, expectedLeft: number, timeoutMs: number): Promise<Books> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const books = await readBooks(store, accountId);
    if (books.holds.length <= expectedLeft || Date.now() > deadline) return books;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** The differences between the client's answered requests and the ledger, as readable lines (empty: they agree). */
export function compareWithLedger(attempts: readonly Attempt[], books: Books): string[] {
  const problems: string[] = [];
  const answered = new Map<string, Attempt>();
  for (const attempt of attempts) {
    if (attempt.outcome !== "answered") continue;
    if (!attempt.requestId) problems.push(`an answered request without X-Request-ID (via ${attempt.via})`);
    else if (answered.has(attempt.requestId)) problems.push(`request id ${attempt.requestId} answered twice`);
    else answered.set(attempt.requestId, attempt);
  }
  for (const [requestId, attempt] of answered) {
    const row = books.usage.get(requestId);
    if (!row) problems.push(`answered ${requestId} (via ${attempt.via}, stream ${attempt.stream}) is not in the ledger`);
    else if (row.rows !== 1) problems.push(`answered ${requestId} has ${row.rows} ledger rows`);
    else if (attempt.costNano !== null && attempt.costNano !== row.cost) problems.push(`answered ${requestId} reported ${attempt.costNano} nano, ledger ${row.cost}`);
  }
  for (const [requestId, row] of books.usage) {
    if (answered.has(requestId)) continue;
    const seen = attempts.find((attempt) => attempt.requestId === requestId);
    problems.push(
      `ledger charges ${requestId} (${row.cost} nano) that the client ${seen ? `saw as ${seen.outcome} ${seen.status} ${seen.errorType ?? ""} ${seen.detail}` : "never saw answered"}`,
    );
  }
  return problems;
}
