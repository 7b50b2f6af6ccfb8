// Ledger reads, retention and the checks of `ledger verify`. Rows are appended by settlement (billing)
// and by administrator balance changes; the database refuses updates and deletes of rows younger than
// 365 days, and chains every row it appends (ledger-chain.ts).
import { sql, type Kysely, type RawBuilder, type Selectable, type Transaction } from "kysely";
import { GatewayError } from "../errors/catalogue.js";
import { dbErrorKind, dbErrorMessage } from "./db-errors.js";
import type { Dialect } from "./dialect.js";
import { LEDGER_CHAIN_COLUMNS, type LedgerChainColumn } from "./ledger-chain.js";
import type { LedgerChainState } from "./ledger-chain-key.js";
import { balanceEffectSql, recomputeLedgerFigures, type LedgerRecomputeOptions, type LedgerRecomputeResult } from "./ledger-recompute.js";
import { transact } from "./transact.js";
import { verifyLedger, type LedgerVerifyOptions, type LedgerVerifyResult } from "./ledger-verify.js";
import type { Database, LedgerTable } from "./tables.js";

/** How long a ledger row is kept: migration 0001's triggers refuse deleting a younger one (its literal is frozen there). */
const LEDGER_RETENTION_MS = 365 * 86_400_000;

export class LedgerStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    /** The chain's columns (ledgerChainColumns of the database's dimension set). */
    private readonly chained: readonly LedgerChainColumn[] = LEDGER_CHAIN_COLUMNS,
    /** The chain's key (the handle's): what keyed rows are checked with; null: none. */
    private readonly chain: LedgerChainState | null = null,
  ) {}

  /**
   * Deletes rows older than N days; N below 365 is refused before touching the database. Per account
   * only the start of its chain goes: its rows in id order up to the first one not older than N days
   * (an old row after a younger one waits for that one), and the account's ledger_anchor becomes the
   * hash of the last row deleted, so that `ledger verify` still checks the rows that remain, and what
   * the deleted rows added to the account's balance and spend and to each key's spend and tokens is
   * carried in pruned_* (migration 0023), so that those figures are still the ledger's sums.
   */
  async prune(olderThanDays: number, now = Date.now()): Promise<number> {
    if (!Number.isInteger(olderThanDays) || olderThanDays < 0) {
      throw new GatewayError("invalid_request", "older-than-days must be a whole number of days", { param: "older_than_days" });
    }
    const cutoff = BigInt(now - olderThanDays * 86_400_000);
    if (olderThanDays * 86_400_000 < LEDGER_RETENTION_MS) {
      throw new GatewayError("ledger_retention_violation", "ledger rows are kept 365 days after created_at; use --older-than-days 365 or more");
    }
    try {
      return await transact(this.db, (trx) => pruneChains(trx, this.dialect, cutoff));
    } catch (error) {
      throw asRetentionError(error);
    }
  }

  /** Walks every account's hash chain; `broken` names the first broken link, null when intact. */
  verify(options: LedgerVerifyOptions = {}): Promise<LedgerVerifyResult> {
    return verifyLedger(this.db, options, this.chained, this.chain?.key ?? null);
  }

  /** Recomputes every figure the ledger determines (balances, spend, tokens, usage) and lists those that differ. */
  recompute(options: LedgerRecomputeOptions = {}): Promise<LedgerRecomputeResult> {
    return recomputeLedgerFigures(this.db, this.dialect, options);
  }

  /** Deletes one row by id: the route-level delete, refused by the database within 365 days. */
  async deleteRow(id: bigint): Promise<void> {
    const deleted = await this.deleteWhere(sql<boolean>`id = ${id}`);
    if (deleted === 0) throw new GatewayError("not_found", `no ledger row ${id}`);
  }

  private async deleteWhere(condition: RawBuilder<boolean>): Promise<number> {
    try {
      const result = await this.db.deleteFrom("ledger").where(condition).executeTakeFirst();
      return Number(result.numDeletedRows);
    } catch (error) {
      throw asRetentionError(error);
    }
  }

  /** The usage row of one request of one account (the unique request_id index finds it); undefined when there is none. */
  async usageRow(accountId: string, requestId: string): Promise<Selectable<LedgerTable> | undefined> {
    return this.db.selectFrom("ledger").selectAll().where("request_id", "=", requestId).where("account_id", "=", accountId).where("kind", "=", "usage").executeTakeFirst();
  }

  async count(accountId?: string): Promise<number> {
    let query = this.db.selectFrom("ledger").select((eb) => eb.fn.countAll<bigint>().as("n"));
    if (accountId) query = query.where("account_id", "=", accountId);
    return Number((await query.executeTakeFirstOrThrow()).n);
  }
}

function asRetentionError(error: unknown): unknown {
  if (dbErrorKind(error) === "trigger" || /ledger_retention_violation/.test(dbErrorMessage(error))) return new GatewayError("ledger_retention_violation");
  return error;
}

/**
 * The prune's queries (exported so that tests EXPLAIN them), on ledger_account_chain (account_id, id).
 * The account as a range ordered by (account_id, id), as in the ledger page (admin/usage-queries.ts):
 * with an equality PostgreSQL walks the primary key filtering by account instead.
 */
export const pruneQueries = {
  /** The account's oldest row: nothing to prune unless it is older than the cutoff. */
  oldest: (db: Kysely<Database>, accountId: string) =>
    db.selectFrom("ledger").select("created_at").where("account_id", ">=", accountId).where("account_id", "<=", accountId).orderBy("account_id").orderBy("id").limit(1),
  /** The account's first row not older than the cutoff, walking its rows in id order (the ones pruned, then this one). */
  firstKept: (db: Kysely<Database>, accountId: string, cutoff: bigint) =>
    db
      .selectFrom("ledger")
      .select("id")
      .where("account_id", ">=", accountId)
      .where("account_id", "<=", accountId)
      .where("created_at", ">=", cutoff)
      .orderBy("account_id")
      .orderBy("id")
      .limit(1),
};

async function pruneChains(trx: Transaction<Database>, dialect: Dialect, cutoff: bigint): Promise<number> {
  // Account by account from the accounts table: the ledger has no index on created_at (nor on
  // (account_id, created_at) since migration 0019), so "which accounts have old rows" is each
  // account's oldest row, one search of ledger_account_chain.
  const accounts = await trx.selectFrom("accounts").select("id").execute();
  let deleted = 0;
  for (const { id: accountId } of accounts) {
    const oldest = await pruneQueries.oldest(trx, accountId).executeTakeFirst();
    if (!oldest || oldest.created_at >= cutoff) continue;
    const firstKept = await pruneQueries.firstKept(trx, accountId, cutoff).executeTakeFirst();
    let lastPruned = trx.selectFrom("ledger").select(["id", "hash"]).where("account_id", "=", accountId);
    if (firstKept) lastPruned = lastPruned.where("id", "<", firstKept.id);
    const last = await lastPruned.orderBy("id", "desc").limit(1).executeTakeFirst();
    if (!last) continue;
    await carryPrunedFigures(trx, dialect, accountId, last.id);
    const result = await trx.deleteFrom("ledger").where("account_id", "=", accountId).where("id", "<=", last.id).executeTakeFirst();
    deleted += Number(result.numDeletedRows);
    // Their tags (migration 0030) go with them: a breakdown by tag covers the rows the ledger keeps.
    await trx.deleteFrom("ledger_tags").where("account_id", "=", accountId).where("ledger_id", "<=", last.id).execute();
    await trx.updateTable("accounts").set({ ledger_anchor: last.hash }).where("id", "=", accountId).execute();
  }
  return deleted;
}

/**
 * Adds what the account's rows up to `lastId` (about to be deleted) contribute to the account's balance
 * and spend, and to each of its keys' spend and tokens, to the pruned_* figures that stand for them
 * (ledger-recompute.ts).
 */
async function carryPrunedFigures(trx: Transaction<Database>, dialect: Dialect, accountId: string, lastId: bigint): Promise<void> {
  const { rows } = await sql<{ balance: unknown; spent: unknown }>`
    select coalesce(sum(${sql.raw(balanceEffectSql(dialect))}), 0) as balance,
      coalesce(sum(case when l.kind = 'usage' then l.cost_nano else 0 end), 0) as spent
    from ledger l where l.account_id = ${accountId} and l.id <= ${lastId}`.execute(trx);
  const totals = rows[0]!;
  await sql`update accounts set pruned_balance_nano = pruned_balance_nano + ${BigInt(String(totals.balance))},
      pruned_spent_nano = pruned_spent_nano + ${BigInt(String(totals.spent))}
    where id = ${accountId}`.execute(trx);
  const keys = await sql<{ key_id: string; spent: unknown; tokens: unknown }>`
    select l.key_id, sum(l.cost_nano) as spent, sum(l.input_tokens + l.output_tokens) as tokens
    from ledger l where l.account_id = ${accountId} and l.id <= ${lastId} and l.kind = 'usage' and l.key_id is not null
    group by l.key_id`.execute(trx);
  for (const key of keys.rows) {
    await sql`update keys set pruned_spent_nano = pruned_spent_nano + ${BigInt(String(key.spent))},
        pruned_tokens = pruned_tokens + ${BigInt(String(key.tokens))}
      where id = ${key.key_id}`.execute(trx);
  }
}
