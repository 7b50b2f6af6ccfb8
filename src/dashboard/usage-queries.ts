// Read models for the dashboard's usage views. One grouped range scan of the ledger (by key, model
// and UTC day) per view, folded in memory into totals, a gap-free daily series for the chart, and
// the by-key and by-model tables. The account view scans ledger_account_time; the workspace view
// reads the rows of the workspace's keys through ledger_key_time.
import { sql, type Kysely } from "kysely";
import { formatUsd } from "../core/money.js";
import type { Database } from "../store/tables.js";

export const DAY_MS = 86_400_000;

interface GroupRow {
  key_id: string | null;
  model: string | null;
  day: bigint;
  requests: bigint;
  input_tokens: bigint | null;
  output_tokens: bigint | null;
  cost_nano: bigint | null;
}

interface Totals {
  requests: number;
  input_tokens: number;
  output_tokens: number;
  tokens: number;
  cost: bigint;
}

export type UsageScope = { accountId: string } | { workspaceId: string };

function empty(): Totals {
  return { requests: 0, input_tokens: 0, output_tokens: 0, tokens: 0, cost: 0n };
}

function add(target: Totals, row: GroupRow): void {
  const input = Number(row.input_tokens ?? 0n);
  const output = Number(row.output_tokens ?? 0n);
  target.requests += Number(row.requests);
  target.input_tokens += input;
  target.output_tokens += output;
  target.tokens += input + output;
  target.cost += BigInt(row.cost_nano ?? 0n);
}

function view(t: Totals) {
  return { requests: t.requests, input_tokens: t.input_tokens, output_tokens: t.output_tokens, tokens: t.tokens, cost_usd: formatUsd(t.cost) };
}

function bucket<K>(map: Map<K, Totals>, key: K): Totals {
  let found = map.get(key);
  if (!found) map.set(key, (found = empty()));
  return found;
}

/** Usage over the last `days` UTC days (today included), for an account or a workspace. */
export async function usageSummary(db: Kysely<Database>, scope: UsageScope, days: number, now = Date.now()) {
  const today = Math.floor(now / DAY_MS);
  const firstDay = today - days + 1;
  const start = BigInt(firstDay * DAY_MS);
  const end = BigInt((today + 1) * DAY_MS);
  const filter = "accountId" in scope ? sql`account_id = ${scope.accountId}` : sql`key_id in (select id from keys where workspace_id = ${scope.workspaceId})`;
  // sum() of bigint is numeric on PostgreSQL: cast back so both drivers hand us bigint.
  const { rows } = await sql<GroupRow>`select key_id, model, created_at / ${sql.lit(DAY_MS)} as day, count(*) as requests,
      cast(sum(input_tokens) as bigint) as input_tokens, cast(sum(output_tokens) as bigint) as output_tokens,
      cast(sum(cost_nano) as bigint) as cost_nano
    from ledger
    where ${filter} and kind = 'usage' and created_at >= ${start} and created_at < ${end}
    group by key_id, model, created_at / ${sql.lit(DAY_MS)}`.execute(db);

  const totals = empty();
  const byDay = new Map<number, Totals>();
  const byKey = new Map<string, Totals>();
  const byModel = new Map<string, Totals>();
  for (const row of rows) {
    for (const target of [totals, bucket(byDay, Number(row.day)), bucket(byKey, row.key_id ?? ""), bucket(byModel, row.model ?? "unknown")]) add(target, row);
  }
  const keyIds = [...byKey.keys()].filter(Boolean);
  const keys = keyIds.length
    ? await db
        .selectFrom("keys")
        .leftJoin("accounts", "accounts.id", "keys.account_id")
        .select(["keys.id", "keys.name", "keys.prefix", "keys.status", "accounts.email"])
        .where("keys.id", "in", keyIds)
        .execute()
    : [];
  const keyInfo = new Map(keys.map((k) => [k.id, k]));

  const series = [];
  for (let day = firstDay; day <= today; day++) {
    series.push({ day: new Date(day * DAY_MS).toISOString().slice(0, 10), ...view(byDay.get(day) ?? empty()) });
  }
  const byCost = (a: [string, Totals], b: [string, Totals]) => (b[1].cost > a[1].cost ? 1 : b[1].cost < a[1].cost ? -1 : a[0] < b[0] ? -1 : 1);
  return {
    start: new Date(Number(start)).toISOString(),
    end: new Date(Number(end)).toISOString(),
    days,
    totals: view(totals),
    by_day: series,
    by_key: [...byKey].sort(byCost).map(([id, t]) => {
      const info = keyInfo.get(id);
      // A permanently deleted key's ledger rows stay; the view names it as deleted.
      return { key_id: id || null, name: info?.name ?? null, prefix: info?.prefix ?? null, status: info?.status ?? "deleted", owner_email: info?.email ?? null, ...view(t) };
    }),
    by_model: [...byModel].sort(byCost).map(([model, t]) => ({ model, ...view(t) })),
  };
}

export interface LedgerPageRow {
  id: bigint;
  created_at: bigint;
  kind: string;
  key_id: string | null;
  key_name: string | null;
  request_id: string;
  model: string | null;
  provider: string | null;
  route: string | null;
  input_tokens: bigint;
  cached_tokens: bigint;
  output_tokens: bigint;
  reasoning_tokens: bigint;
  cost_nano: bigint;
  estimated: bigint;
  note: string | null;
}

/** One page of an account's ledger, newest first, keyset-paginated by row id (stable under inserts). */
export async function ledgerPage(db: Kysely<Database>, accountId: string, options: { limit: number; before?: bigint; since?: bigint }): Promise<LedgerPageRow[]> {
  let query = db
    .selectFrom("ledger")
    .leftJoin("keys", "keys.id", "ledger.key_id")
    .select([
      "ledger.id",
      "ledger.created_at",
      "ledger.kind",
      "ledger.key_id",
      "keys.name as key_name",
      "ledger.request_id",
      "ledger.model",
      "ledger.provider",
      "ledger.route",
      "ledger.input_tokens",
      "ledger.cached_tokens",
      "ledger.output_tokens",
      "ledger.reasoning_tokens",
      "ledger.cost_nano",
      "ledger.estimated",
      "ledger.note",
    ])
    .where("ledger.account_id", "=", accountId);
  if (options.before !== undefined) query = query.where("ledger.id", "<", options.before);
  if (options.since !== undefined) query = query.where("ledger.created_at", ">=", options.since);
  return query.orderBy("ledger.id", "desc").limit(options.limit).execute();
}

export function ledgerRowView(row: LedgerPageRow) {
  return {
    id: row.id.toString(),
    created_at: new Date(Number(row.created_at)).toISOString(),
    kind: row.kind,
    key_id: row.key_id,
    key_name: row.key_name,
    request_id: row.request_id,
    model: row.model,
    provider: row.provider,
    route: row.route,
    input_tokens: Number(row.input_tokens),
    cached_tokens: Number(row.cached_tokens),
    output_tokens: Number(row.output_tokens),
    reasoning_tokens: Number(row.reasoning_tokens),
    cost_usd: formatUsd(BigInt(row.cost_nano)),
    estimated: row.estimated === 1n,
    note: row.note,
  };
}
