// Walks the ledger's hash chains (ledger-chain.ts) and reports the first broken link. One pass over
// the ledger in id order, a page at a time: memory is one page plus, per account seen, its last hash
// and row id; never the ledger itself. Then each account's stored head must equal its last row's
// hash, which is what reveals rows deleted from the end of a chain.
//
// Keyed chain (ledger-chain-key.ts): a row at or after an epoch's from_id must carry the HMAC of its
// hash under that epoch's key. With that key (the store's secret) it is checked like any other; without
// it the row is counted as not verified and its stored hash taken as the link to the next one, so the
// rows before the epoch, and the heads, are still checked.
//
// The walk reads committed rows while the gateway appends more, without holding one snapshot (on
// PostgreSQL a long snapshot would keep every version of the busiest account rows alive for its
// whole length). Two consequences are checked before anything is reported:
//   - on PostgreSQL a row's id is drawn before its transaction commits, so a page can pass over a row
//     that commits later than rows with higher ids (of other accounts). A link that does not match
//     is asked again with the account's rows between the last one walked and this one: a row found
//     there is walked first (it committed before its successor, which waited for the account's lock);
//   - a head read after the walk may already name rows appended since: the account's newer rows are
//     walked on until the head is met.
import { sql, type Kysely } from "kysely";
import { LEDGER_CHAIN_COLUMNS, LEDGER_GENESIS_HASH, ledgerRowHash, type LedgerChainColumn } from "./ledger-chain.js";
import { epochIsAuthentic, readChainEpochs, type LedgerChainEpoch, type LedgerChainKey } from "./ledger-chain-key.js";
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

/** The keyed part of the chain (ledger_chain_keys), as the walk found it. */
export interface LedgerKeyedPart {
  /** The first keyed row id (the first epoch's from_id). */
  fromId: bigint;
  /** The latest epoch's key id. */
  keyId: string;
  /** Keyed rows the walk could not check: the store has no secret, or not the one of their epoch. */
  unverifiedRows: number;
  /**
   * null: every keyed row was checked and every epoch record carries its MAC. "no_secret" or
   * "other_secret": some could not be checked. "epoch_altered": an epoch record's MAC is wrong (its
   * from_id, key id or time was changed).
   */
  problem: null | "no_secret" | "other_secret" | "epoch_altered";
}

export interface LedgerVerifyResult {
  accounts: number;
  rows: number;
  broken: LedgerBrokenLink | null;
  /** Present when ledger_chain_keys holds an epoch. */
  keyed?: LedgerKeyedPart;
}

export interface LedgerVerifyOptions {
  accountId?: string;
  pageRows?: number;
  /** After each page; the walk waits for what it returns. */
  onProgress?: (progress: LedgerVerifyProgress) => unknown;
}

interface ChainState {
  hash: string;
  lastRowId: bigint | null;
}

type ChainRow = Record<string, unknown> & { id: bigint; account_id: string; hash: string | null };

/** How each row's hash is expected: unkeyed, sealed with the key, or not checkable (no key for its epoch). */
class Expectations {
  readonly #epochs: LedgerChainEpoch[];
  readonly #key: LedgerChainKey | null;
  unverified = 0;

  constructor(epochs: LedgerChainEpoch[], key: LedgerChainKey | null) {
    this.#epochs = epochs;
    this.#key = key;
  }

  /** The expected hash of a row whose unkeyed hash is `unkeyed`; null when it cannot be checked. */
  expected(id: bigint, unkeyed: string): string | null {
    const epochs = this.#epochs;
    if (epochs.length === 0 || id < epochs[0]!.fromId) return unkeyed;
    let epoch = epochs[0]!;
    for (const e of epochs) if (e.fromId <= id) epoch = e;
    if (this.#key === null || this.#key.id !== epoch.keyId) return null;
    return this.#key.seal(unkeyed);
  }

  part(): LedgerKeyedPart | undefined {
    const epochs = this.#epochs;
    if (epochs.length === 0) return undefined;
    const key = this.#key;
    let problem: LedgerKeyedPart["problem"] = null;
    if (this.unverified > 0) problem = key === null ? "no_secret" : "other_secret";
    else if (key !== null && epochs.some((e) => e.keyId === key.id && !epochIsAuthentic(e, key))) problem = "epoch_altered";
    return { fromId: epochs[0]!.fromId, keyId: epochs[epochs.length - 1]!.keyId, unverifiedRows: this.unverified, problem };
  }
}

/**
 * `chained`: the chain's columns (ledgerChainColumns of the database's dimension set). `key`: the
 * chain's key (the store's GATEWAY_LEDGER_SECRET), null without one.
 */
export async function verifyLedger(
  db: Kysely<Database>,
  options: LedgerVerifyOptions = {},
  chained: readonly LedgerChainColumn[] = LEDGER_CHAIN_COLUMNS,
  key: LedgerChainKey | null = null,
): Promise<LedgerVerifyResult> {
  const pageRows = options.pageRows ?? 2000;
  const chains = new Map<string, ChainState>();
  const onlyAccount = options.accountId === undefined ? sql`` : sql`and account_id = ${options.accountId}`;
  const columns = sql.join(chained.map((c) => sql.ref(c.name)));
  const expectations = new Expectations(await readChainEpochs(db), key);
  const last = await sql<{ id: bigint | null }>`select max(id) as id from ledger where 1 = 1 ${onlyAccount}`.execute(db);
  const lastId = BigInt(last.rows[0]?.id ?? 0n);
  let rows = 0;
  let after = 0n;

  /** Walks one row on its account's chain; the broken link when its hash is not the one expected. */
  const walk = (chain: ChainState, row: ChainRow): LedgerBrokenLink | null => {
    const unkeyed = ledgerRowHash(chain.hash, row, chained);
    const expected = expectations.expected(row.id, unkeyed);
    rows++;
    if (expected === null) expectations.unverified++;
    else if (row.hash !== expected) return { rowId: row.id, accountId: row.account_id, where: "row", expected, found: row.hash };
    chain.hash = row.hash ?? unkeyed;
    chain.lastRowId = row.id;
    return null;
  };

  /** The account's rows after its last walked one, up to `beforeId` (exclusive; null: all). */
  const rowsAfter = async (accountId: string, chain: ChainState, beforeId: bigint | null): Promise<ChainRow[]> => {
    const below = beforeId === null ? sql`` : sql`and id < ${beforeId}`;
    return (
      await sql<ChainRow>`select id, hash, ${columns} from ledger
        where account_id = ${accountId} and id > ${chain.lastRowId ?? 0n} ${below} order by account_id, id`.execute(db)
    ).rows;
  };

  for (;;) {
    const page = (await sql<ChainRow>`select id, hash, ${columns} from ledger where id > ${after} ${onlyAccount} order by id limit ${pageRows}`.execute(db)).rows;
    if (page.length === 0) break;
    await loadAnchors(db, chains, page);
    for (const row of page) {
      const chain = chains.get(row.account_id)!;
      if (chain.lastRowId !== null && row.id <= chain.lastRowId) continue; // walked already, by a late row's recheck
      const saved = { ...chain };
      let broken = walk(chain, row);
      if (broken !== null) {
        // A row of this account that committed after the page that should have held it: walk it first.
        Object.assign(chain, saved);
        rows--;
        const late = await rowsAfter(row.account_id, chain, row.id);
        broken = late.length === 0 ? walk(chain, row) : null;
        for (const missed of late) broken ??= walk(chain, missed);
        broken ??= walk(chain, row);
        if (broken !== null) return { accounts: chains.size, rows, broken, ...withKeyed(expectations) };
      }
    }
    after = page[page.length - 1]!.id;
    await options.onProgress?.({ rows, lastId, atId: after });
  }

  const broken = await checkHeads(db, chains, options.accountId, async (accountId, chain, head) => {
    // Rows appended since the walk: walked on until the head read is met.
    for (const row of await rowsAfter(accountId, chain, null)) {
      const link = walk(chain, row);
      if (link !== null) return link;
      if (chain.hash === head) return null;
    }
    return undefined;
  });
  return { accounts: chains.size, rows, broken, ...withKeyed(expectations) };
}

function withKeyed(expectations: Expectations): { keyed?: LedgerKeyedPart } {
  const keyed = expectations.part();
  return keyed === undefined ? {} : { keyed };
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
 * then the head is the anchor. `catchUp` walks an account's rows appended since the walk: null when
 * they lead to the head, a broken link among them, or undefined when the head is still not met.
 */
async function checkHeads(
  db: Kysely<Database>,
  chains: Map<string, ChainState>,
  accountId: string | undefined,
  catchUp: (accountId: string, chain: ChainState, head: string | null) => Promise<LedgerBrokenLink | null | undefined>,
): Promise<LedgerBrokenLink | null> {
  let after = "";
  for (;;) {
    let query = db.selectFrom("accounts").select(["id", "ledger_head", "ledger_anchor"]).where("id", ">", after).orderBy("id").limit(1000);
    if (accountId !== undefined) query = query.where("id", "=", accountId);
    const accounts = await query.execute();
    if (accounts.length === 0) return null;
    for (const account of accounts) {
      let chain = chains.get(account.id);
      if ((chain?.hash ?? account.ledger_anchor) === account.ledger_head) continue;
      if (chain === undefined) chains.set(account.id, (chain = { hash: account.ledger_anchor ?? LEDGER_GENESIS_HASH, lastRowId: null }));
      const link = await catchUp(account.id, chain, account.ledger_head);
      if (link === null) continue;
      if (link !== undefined) return link;
      const expected = chain.lastRowId === null ? account.ledger_anchor : chain.hash;
      return { rowId: chain.lastRowId, accountId: account.id, where: "head", expected: expected ?? LEDGER_GENESIS_HASH, found: account.ledger_head };
    }
    after = accounts[accounts.length - 1]!.id;
  }
}
