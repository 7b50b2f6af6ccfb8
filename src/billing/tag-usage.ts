// Spend by tag (docs/billing.md, "Tags and tag budgets"): the charged ledger rows' tags (ledger_tags,
// migration 0030) summed per tag over a window. Each query reads an index: an account's tags by
// ledger_tags_account_time; a key's (and a workspace's keys') by the ledger's ledger_key_time, each
// row's tags then by ledger_tags' primary key (ledger_id, tag); every account's (the operator's report)
// by ledger_tags_account_time, one range per account. A row with several tags counts in
// each, so the tags' sums may add up to more than the total: each answers "what did this tag cost".
import { sql, type Kysely } from "kysely";
import { formatUsd } from "../core/money.js";
import type { Database } from "../store/tables.js";
import type { Dialect } from "../store/dialect.js";

/** allAccounts: every account's tags (the operator's report), on the database named. */
export type TagUsageScope = { accountId: string } | { keyId: string } | { workspaceId: string } | { allAccounts: Dialect };

export interface TagUsageJson {
  tag: string;
  requests: number;
  cost_usd: string;
  tokens: number;
}

interface TagRow {
  tag: string;
  requests: unknown;
  cost: unknown;
  tokens: unknown;
}

/** Exported so that tests can EXPLAIN exactly what runs. */
export function tagUsageQuery(scope: TagUsageScope, start: number, end: number) {
  const from = BigInt(start);
  const to = BigInt(end);
  const sums = sql`t.tag, count(*) as requests, sum(t.cost_nano) as cost, sum(t.tokens) as tokens`;
  if ("accountId" in scope) {
    return sql<TagRow>`select ${sums} from ledger_tags t
      where t.account_id = ${scope.accountId} and t.created_at >= ${from} and t.created_at < ${to} group by t.tag`;
  }
  if ("allAccounts" in scope) {
    // Each account's range of ledger_tags_account_time (the ledger has no time index since 0018).
    // PostgreSQL hashes the join and reads the whole table unless told: a lateral subquery per account.
    if (scope.allAccounts === "postgres") {
      return sql<TagRow>`select x.tag, sum(x.requests) as requests, sum(x.cost) as cost, sum(x.tokens) as tokens
        from accounts a cross join lateral (select ${sums} from ledger_tags t
          where t.account_id = a.id and t.created_at >= ${from} and t.created_at < ${to} group by t.tag) x
        group by x.tag`;
    }
    return sql<TagRow>`select ${sums} from accounts a join ledger_tags t on t.account_id = a.id
      where t.created_at >= ${from} and t.created_at < ${to} group by t.tag`;
  }
  const keys = "keyId" in scope ? sql`l.key_id = ${scope.keyId}` : sql`l.key_id in (select id from keys where workspace_id = ${scope.workspaceId})`;
  return sql<TagRow>`select ${sums} from ledger l join ledger_tags t on t.ledger_id = l.id
    where ${keys} and l.created_at >= ${from} and l.created_at < ${to} group by t.tag`;
}

/** Spend per tag over [start, end), dearest first (equal costs by tag). */
export async function tagUsage(db: Kysely<Database>, scope: TagUsageScope, start: number, end: number): Promise<TagUsageJson[]> {
  const { rows } = await tagUsageQuery(scope, start, end).execute(db);
  return rows
    .map((r) => ({ tag: r.tag, requests: Number(r.requests), cost: BigInt(String(r.cost ?? 0)), tokens: Number(r.tokens ?? 0) }))
    .sort((a, b) => (b.cost > a.cost ? 1 : b.cost < a.cost ? -1 : a.tag < b.tag ? -1 : 1))
    .map((r) => ({ tag: r.tag, requests: r.requests, cost_usd: formatUsd(r.cost), tokens: r.tokens }));
}
