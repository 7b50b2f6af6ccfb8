// Read models for the dashboard's usage views. One grouped range scan of the usage rollup
// (usage_hourly, migration 0017: the ledger's usage summed per key, hour, model and provider) per view,
// whose windows are whole UTC days, folded in memory into totals, a gap-free daily series for the
// chart, and the by-key and by-model tables. The account view reads usage_hourly_account; the
// workspace view reads the workspace's keys through the rollup's primary key. The ledger page and the
// CSV read the ledger itself, newest first, on ledger_account_chain (account_id, id).
import { formatPriceFactor } from "../core/price-factor.js";
import { sql, type Kysely } from "kysely";
import { BASE_COUNT_COLUMNS, CACHE_SAVING_COLUMN, DIMENSIONS, LEDGER_DIMENSION_COLUMNS } from "../core/dimensions.js";
import { addSums, emptyTotals, type UsageSumsRow, type UsageTotals } from "../billing/usage-report.js";
import { byCost, memberRows, usageByWorkspaceQuery, view, workspaceRows } from "./usage-breakdowns.js";
import { HOUR_MS, HOURS_PER_DAY, rollupSumsSql } from "../billing/usage-rollup.js";
import { formatUsd } from "../core/money.js";
import { tagUsage } from "../billing/tag-usage.js";
import type { Dialect } from "../store/dialect.js";
import type { Database } from "../store/tables.js";

export const DAY_MS = 86_400_000;

type GroupRow = UsageSumsRow & { key_id: string | null; account_id: string; model: string | null; day: bigint };

export type UsageScope = { accountId: string } | { workspaceId: string };

/** A view's window, [start, end) in ms, its length in days, and the totals over it. */
function windowView(start: bigint, end: bigint, days: number, totals: UsageTotals) {
  return { start: new Date(Number(start)).toISOString(), end: new Date(Number(end)).toISOString(), days, totals: view(totals) };
}

function bucket<K>(map: Map<K, UsageTotals>, key: K): UsageTotals {
  let found = map.get(key);
  if (!found) map.set(key, (found = emptyTotals()));
  return found;
}

/**
 * A usage view's groups (key, model, UTC day) over whole UTC days, [firstHour, endHour), from the
 * rollup (usage_hourly, migration 0017): the account's rows by usage_hourly_account, a workspace's keys
 * by the primary key. Exported so that tests EXPLAIN exactly what runs.
 */
export function usageSummaryQuery(scope: UsageScope, firstHour: number, endHour: number) {
  const filter = "accountId" in scope ? sql`account_id = ${scope.accountId}` : sql`key_id in (select id from keys where workspace_id = ${scope.workspaceId})`;
  // account_id follows from key_id (a key has one owner): grouping by it adds no groups.
  return sql<GroupRow>`select nullif(key_id, '') as key_id, account_id, nullif(model, '') as model, hour / ${sql.lit(HOURS_PER_DAY)} as day, ${rollupSumsSql()}
    from usage_hourly
    where ${filter} and hour >= ${BigInt(firstHour)} and hour < ${BigInt(endHour)}
    group by key_id, account_id, model, hour / ${sql.lit(HOURS_PER_DAY)}`;
}

/** Every account's groups (account, model, provider) over whole hours, from the rollup (usage_hourly_hour). */
export function usageAcrossAccountsQuery(firstHour: number, endHour: number) {
  return sql<AllAccountsRow>`select account_id, nullif(model, '') as model, nullif(provider, '') as provider, ${rollupSumsSql()}
    from usage_hourly
    where hour >= ${BigInt(firstHour)} and hour < ${BigInt(endHour)}
    group by account_id, model, provider`;
}

/** Usage over the last `days` UTC days (today included), for an account or a workspace. */
export async function usageSummary(db: Kysely<Database>, scope: UsageScope, days: number, now = Date.now()) {
  const today = Math.floor(now / DAY_MS);
  const firstDay = today - days + 1;
  const start = BigInt(firstDay * DAY_MS);
  const end = BigInt((today + 1) * DAY_MS);
  const { rows } = await usageSummaryQuery(scope, firstDay * HOURS_PER_DAY, (today + 1) * HOURS_PER_DAY).execute(db);

  const keyIds = [...new Set(rows.map((r) => r.key_id ?? ""))].filter(Boolean);
  const keys = keyIds.length
    ? await db
        .selectFrom("keys")
        .leftJoin("accounts", "accounts.id", "keys.account_id")
        .select(["keys.id", "keys.name", "keys.prefix", "keys.status", "keys.workspace_id", "accounts.email"])
        .where("keys.id", "in", keyIds)
        .execute()
    : [];
  const keyInfo = new Map(keys.map((k) => [k.id, k]));

  const totals = emptyTotals();
  const byDay = new Map<number, UsageTotals>();
  const byKey = new Map<string, UsageTotals>();
  const byModel = new Map<string, UsageTotals>();
  // "" for keys in no workspace (and deleted keys, whose workspace is gone with them).
  const byWorkspace = new Map<string, UsageTotals>();
  const byMember = new Map<string, UsageTotals>();
  for (const row of rows) {
    const workspace = keyInfo.get(row.key_id ?? "")?.workspace_id ?? "";
    const targets = [
      totals,
      bucket(byDay, Number(row.day)),
      bucket(byKey, row.key_id ?? ""),
      bucket(byModel, row.model ?? "unknown"),
      bucket(byWorkspace, workspace),
      bucket(byMember, row.account_id),
    ];
    for (const target of targets) addSums(target, row);
  }

  const series = [];
  for (let day = firstDay; day <= today; day++) {
    series.push({ day: new Date(day * DAY_MS).toISOString().slice(0, 10), ...view(byDay.get(day) ?? emptyTotals()) });
  }
  return {
    ...windowView(start, end, days, totals),
    by_day: series,
    by_key: [...byKey].sort(byCost).map(([id, t]) => {
      const info = keyInfo.get(id);
      // A permanently deleted key's ledger rows stay; the view names it as deleted.
      return { key_id: id || null, name: info?.name ?? null, prefix: info?.prefix ?? null, status: info?.status ?? "deleted", owner_email: info?.email ?? null, ...view(t) };
    }),
    by_model: [...byModel].sort(byCost).map(([model, t]) => ({ model, ...view(t) })),
    by_tag: await tagUsage(db, scope, Number(start), Number(end)),
    by_workspace: await workspaceRows(db, byWorkspace),
    by_member: await memberRows(db, byMember),
  };
}

type AllAccountsRow = UsageSumsRow & { account_id: string; model: string | null; provider: string | null };

/**
 * Usage of every account over the last `days` UTC days (today included), for administrators: totals
 * by account (with its email), by model and by provider. One grouped scan of the window's rollup rows.
 */
export async function usageAcrossAccounts({ db, dialect }: LedgerDatabase, days: number, now = Date.now()) {
  const today = Math.floor(now / DAY_MS);
  const start = BigInt((today - days + 1) * DAY_MS);
  const end = BigInt((today + 1) * DAY_MS);
  const { rows } = await usageAcrossAccountsQuery(Number(start / BigInt(HOUR_MS)), Number(end / BigInt(HOUR_MS))).execute(db);
  const totals = emptyTotals();
  const byAccount = new Map<string, UsageTotals>();
  const byModel = new Map<string, UsageTotals>();
  const byProvider = new Map<string, UsageTotals>();
  for (const row of rows) {
    for (const target of [totals, bucket(byAccount, row.account_id), bucket(byModel, row.model ?? "unknown"), bucket(byProvider, row.provider ?? "unknown")]) addSums(target, row);
  }
  const workspaces = await usageByWorkspaceQuery(Number(start / BigInt(HOUR_MS)), Number(end / BigInt(HOUR_MS))).execute(db);
  const byWorkspace = new Map<string, UsageTotals>();
  for (const row of workspaces.rows) addSums(bucket(byWorkspace, row.workspace_id ?? ""), row);
  return {
    ...windowView(start, end, days, totals),
    by_account: await memberRows(db, byAccount),
    by_model: [...byModel].sort(byCost).map(([model, t]) => ({ model, ...view(t) })),
    by_provider: [...byProvider].sort(byCost).map(([provider, t]) => ({ provider, ...view(t) })),
    by_workspace: await workspaceRows(db, byWorkspace),
    by_tag: await tagUsage(db, { allAccounts: dialect }, Number(start), Number(end)),
  };
}

interface LedgerPageBase {
  id: bigint;
  created_at: bigint;
  kind: string;
  key_id: string | null;
  key_name: string | null;
  workspace_id: string | null;
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
  deployment: string | null;
  price_factor_ppm: bigint | null;
}

/** A ledger page row: the columns above and every dimension column (LEDGER_DIMENSION_COLUMNS). */
export type LedgerPageRow = LedgerPageBase & Partial<Record<string, bigint>>;

/** One page of an account's ledger, newest first, keyset-paginated by row id (stable under inserts). */
export async function ledgerPage(database: LedgerDatabase, accountId: string, options: LedgerPageOptions): Promise<LedgerPageRow[]> {
  return (await ledgerPageQuery(database, accountId, options).execute()) as LedgerPageRow[];
}

/** The database and which one it is: the page's query differs (ledgerPageQuery). The Store is one. */
export interface LedgerDatabase {
  db: Kysely<Database>;
  dialect: Dialect;
}

export interface LedgerPageOptions {
  limit: number;
  before?: bigint;
  since?: bigint;
}

/** ledgerPage's query (exported so that tests EXPLAIN it): a backward range of ledger_account_chain (account_id, id). */
export function ledgerPageQuery({ db, dialect }: LedgerDatabase, accountId: string, options: LedgerPageOptions) {
  let query = db
    .selectFrom("ledger")
    .leftJoin("keys", "keys.id", "ledger.key_id")
    .select([
      "ledger.id",
      "ledger.created_at",
      "ledger.kind",
      "ledger.key_id",
      "keys.name as key_name",
      // The key's workspace now (a key's workspace is set when it is made); null: none, or the key is deleted.
      "keys.workspace_id",
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
      "ledger.deployment",
      "ledger.price_factor_ppm",
      ...LEDGER_DIMENSION_COLUMNS.map((c) => sql.ref(`ledger.${c}`).as(c)),
    ])
    // The account: an equality on SQLite, a range on PostgreSQL. With an equality PostgreSQL drops
    // account_id from the order, estimates the account's rows as spread evenly over the ledger and walks
    // the primary key backward filtering by account: for a busy account's deep page (or a CSV's end),
    // all of the older ledger. As a range ordered by (account_id, id), only ledger_account_chain gives
    // that order. On SQLite a range would leave the id bound out of the index search (each page would
    // step over every newer row of the account): there the equality, which it orders by correctly.
    .where((eb) =>
      dialect === "postgres" ? eb.and([eb("ledger.account_id", ">=", accountId), eb("ledger.account_id", "<=", accountId)]) : eb("ledger.account_id", "=", accountId),
    );
  if (options.before !== undefined) query = query.where("ledger.id", "<", options.before);
  if (options.since !== undefined) query = query.where("ledger.created_at", ">=", options.since);
  return query.orderBy("ledger.account_id", "desc").orderBy("ledger.id", "desc").limit(options.limit);
}

export function ledgerRowView(row: LedgerPageRow) {
  return {
    id: row.id.toString(),
    created_at: new Date(Number(row.created_at)).toISOString(),
    kind: row.kind,
    key_id: row.key_id,
    key_name: row.key_name,
    workspace_id: row.workspace_id,
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
    deployment: row.deployment,
    // The tier's price factor the row was charged at (migration 0026), "1.5"; null: list prices.
    price_factor: row.price_factor_ppm === null ? null : formatPriceFactor(Number(row.price_factor_ppm)),
    ...dimensionFields(row),
  };
}

/** A page's rows as ledgerRowView shows them, each with its tags ("key=value" joined by commas; null: none), read by ledger_tags' primary key. */
export async function ledgerRowsView(db: Kysely<Database>, rows: readonly LedgerPageRow[]) {
  const tags = new Map<string, string[]>();
  if (rows.length > 0) {
    const found = await db
      .selectFrom("ledger_tags")
      .select(["ledger_id", "tag"])
      .where(
        "ledger_id",
        "in",
        rows.map((r) => r.id),
      )
      .orderBy("ledger_id")
      .orderBy("tag")
      .execute();
    for (const t of found) tags.set(String(t.ledger_id), [...(tags.get(String(t.ledger_id)) ?? []), t.tag]);
  }
  return rows.map((row) => ({ ...ledgerRowView(row), tags: tags.get(row.id.toString())?.join(",") ?? null }));
}

/** The row's count per dimension added since 0001 (cache writes, web searches, images, seconds), its cost per dimension and the cache saving. */
function dimensionFields(row: LedgerPageRow): Record<string, number | string> {
  const fields: Record<string, number | string> = {};
  for (const d of DIMENSIONS) if (d.countColumn !== null && !BASE_COUNT_COLUMNS.has(d.countColumn)) fields[d.countColumn] = Number(row[d.countColumn] ?? 0n);
  for (const d of DIMENSIONS) fields[`${d.name}_cost_usd`] = formatUsd(BigInt(row[d.costColumn] ?? 0n));
  fields.cache_saving_usd = formatUsd(BigInt(row[CACHE_SAVING_COLUMN] ?? 0n));
  return fields;
}

/** A request's counts and cost as every CSV of requests names them (the ledger's, the request log's). */
export const REQUEST_COUNT_COLUMNS = ["input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens", "cost_usd", "estimated"] as const;

/** The CSV's columns: the ledger row's, then the per-dimension ones of dimensionFields, in list order. */
export const LEDGER_CSV_COLUMNS: readonly string[] = [
  "id",
  "created_at",
  "kind",
  "key_id",
  "key_name",
  "workspace_id",
  "request_id",
  "model",
  "provider",
  "route",
  "deployment",
  ...REQUEST_COUNT_COLUMNS,
  "note",
  "price_factor",
  ...DIMENSIONS.flatMap((d) => (d.countColumn !== null && !BASE_COUNT_COLUMNS.has(d.countColumn) ? [d.countColumn] : [])),
  ...DIMENSIONS.map((d) => `${d.name}_cost_usd`),
  "cache_saving_usd",
  "tags",
];
