// Walks the ledger's hash chains (ledger-chain.ts) and reports the first broken link. One pass over
// the ledger in id order, a page at a time: memory is one page plus, per account seen, its last hash
// and row id; never the ledger itself. Then each account's stored head must equal its last row's
// hash, which is what reveals rows deleted from the end of a chain.
import { sql, type Kysely } from "kysely";
import { LEDGER_CHAIN_COLUMNS, LEDGER_GENESIS_HASH, ledgerRowHash, type LedgerChainColumn } from "./ledger-chain.js";
import type { Database } from "./tables.js";

export interface LedgerBrokenLink {
  /** The row whose stored hash is wrong; for a wrong head, the account's last row (null: it has none). */
  rowId: bigint | null;
  accountId: string;
  /** "row": the row's hash differs from the one computed; "head": the account's ledger_head does. */
  where: "row" | "head";
  expected: string;
  found: string | null;
}

export interface LedgerVerifyProgress {
  rows: number;
  /** The id of the ledger's last row when the walk began. */
  lastId: bigint;
  /** The id reached. */
  atId: bigint;
}

export interface LedgerVerifyResult {
  accounts: number;
  rows: number;
  broken: LedgerBrokenLink | null;
}

export interface LedgerVerifyOptions {
  accountId?: string;
  pageRows?: number;
  onProgress?: (progress: LedgerVerifyProgress) => void;
}

interface ChainState {
  hash: string;
  lastRowId: bigint | null;
}

type ChainRow = Record<string, unknown> & { id: bigint; account_id: string; hash: string | null };

/** `chained`: the chain's columns (ledgerChainColumns of the database's dimension set). */
export async function verifyLedger(
  db: Kysely<Database>,
  options: LedgerVerifyOptions = {},
  chained: readonly LedgerChainColumn[] = LEDGER_CHAIN_COLUMNS,
): Promise<LedgerVerifyResult> {
  const pageRows = options.pageRows ?? 2000;
  const chains = new Map<string, ChainState>();
  const onlyAccount = options.accountId === undefined ? sql`` : sql`and account_id = ${options.accountId}`;
  const columns = sql.join(chained.map((c) => sql.ref(c.name)));
  const last = await sql<{ id: bigint | null }>`select max(id) as id from ledger where 1 = 1 ${onlyAccount}`.execute(db);
  const lastId = BigInt(last.rows[0]?.id ?? 0n);
  let rows = 0;
  let after = 0n;

  for (;;) {
    const page = (await sql<ChainRow>`select id, hash, ${columns} from ledger where id > ${after} ${onlyAccount} order by id limit ${pageRows}`.execute(db)).rows;
    if (page.length === 0) break;
    await loadAnchors(db, chains, page);
    for (const row of page) {
      const chain = chains.get(row.account_id)!;
      const expected = ledgerRowHash(chain.hash, row, chained);
      rows++;
      if (row.hash !== expected) {
        return { accounts: chains.size, rows, broken: { rowId: row.id, accountId: row.account_id, where: "row", expected, found: row.hash } };
      }
      chain.hash = expected;
      chain.lastRowId = row.id;
    }
    after = page[page.length - 1]!.id;
    options.onProgress?.({ rows, lastId, atId: after });
  }

  const broken = await checkHeads(db, chains, options.accountId);
  return { accounts: chains.size, rows, broken };
}

/** Starts the chain of each account first seen on this page at its anchor (set by prune) or genesis. */
async function loadAnchors(db: Kysely<Database>, chains: Map<string, ChainState>, page: ChainRow[]): Promise<void> {
  const unseen = [...new Set(page.map((row) => row.account_id))].filter((id) => !chains.has(id));
  if (unseen.length === 0) return;
  const anchors = await db.selectFrom("accounts").select(["id", "ledger_anchor"]).where("id", "in", unseen).execute();
  const anchorOf = new Map(anchors.map((a) => [a.id, a.ledger_anchor]));
  for (const id of unseen) chains.set(id, { hash: anchorOf.get(id) ?? LEDGER_GENESIS_HASH, lastRowId: null });
}

/**
 * Each account's ledger_head must be its last row's hash: a head ahead of the rows means rows were
 * deleted from the end. An account without rows has a head only when prune deleted them all, and
 * then the head is the anchor.
 */
async function checkHeads(db: Kysely<Database>, chains: Map<string, ChainState>, accountId: string | undefined): Promise<LedgerBrokenLink | null> {
  let after = "";
  for (;;) {
    let query = db.selectFrom("accounts").select(["id", "ledger_head", "ledger_anchor"]).where("id", ">", after).orderBy("id").limit(1000);
    if (accountId !== undefined) query = query.where("id", "=", accountId);
    const accounts = await query.execute();
    if (accounts.length === 0) return null;
    for (const account of accounts) {
      const chain = chains.get(account.id);
      const expected = chain?.hash ?? account.ledger_anchor;
      if (account.ledger_head !== expected) {
        return { rowId: chain?.lastRowId ?? null, accountId: account.id, where: "head", expected: expected ?? LEDGER_GENESIS_HASH, found: account.ledger_head };
      }
    }
    after = accounts[accounts.length - 1]!.id;
  }
}
