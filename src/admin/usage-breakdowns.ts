// The usage views' breakdown tables beyond key, model and day: spend per workspace (the workspace a
// key belongs to, keys.workspace_id; null: keys in none, or deleted) and per member (the account that
// owns the key). Totals are folded in memory from the rollup's groups; names are read by primary key.
import { sql, type Kysely } from "kysely";
import { usageTotalsJson, type UsageSumsRow, type UsageTotals } from "../billing/usage-report.js";
import { rollupSumsSql } from "../billing/usage-rollup.js";
import type { Database } from "../store/tables.js";

/** Totals as the views show them: the counts, tokens (input + output), spend per dimension and caching. */
export function view(t: UsageTotals) {
  return { ...usageTotalsJson(t), tokens: t.inputTokens + t.outputTokens };
}

/** Dearest first; equal costs by name. */
export function byCost(a: [string, UsageTotals], b: [string, UsageTotals]): number {
  return b[1].cost > a[1].cost ? 1 : b[1].cost < a[1].cost ? -1 : a[0] < b[0] ? -1 : 1;
}

/** Spend per workspace ("" in the map: no workspace, shown as null), dearest first, each with its name. */
export async function workspaceRows(db: Kysely<Database>, byWorkspace: ReadonlyMap<string, UsageTotals>) {
  const ids = [...byWorkspace.keys()].filter(Boolean);
  const names = new Map(ids.length ? (await db.selectFrom("workspaces").select(["id", "name"]).where("id", "in", ids).execute()).map((w) => [w.id, w.name] as const) : []);
  return [...byWorkspace].sort(byCost).map(([id, t]) => ({ workspace_id: id || null, name: names.get(id) ?? null, ...view(t) }));
}

/** Spend per member (the keys' owning account), dearest first, each with its email. */
export async function memberRows(db: Kysely<Database>, byMember: ReadonlyMap<string, UsageTotals>) {
  const ids = [...byMember.keys()];
  const emails = new Map(ids.length ? (await db.selectFrom("accounts").select(["id", "email"]).where("id", "in", ids).execute()).map((a) => [a.id, a.email] as const) : []);
  return [...byMember].sort(byCost).map(([id, t]) => ({ account_id: id, email: emails.get(id) ?? null, ...view(t) }));
}

type WorkspaceGroupRow = UsageSumsRow & { workspace_id: string | null };

/**
 * Every account's usage per workspace over whole hours: the rollup's rows of the window (usage_hourly_hour),
 * each key's workspace by the keys' primary key. Exported so that tests EXPLAIN exactly what runs.
 */
export function usageByWorkspaceQuery(firstHour: number, endHour: number) {
  return sql<WorkspaceGroupRow>`select k.workspace_id as workspace_id, ${rollupSumsSql()}
    from usage_hourly u left join keys k on k.id = u.key_id
    where u.hour >= ${BigInt(firstHour)} and u.hour < ${BigInt(endHour)}
    group by k.workspace_id`;
}
