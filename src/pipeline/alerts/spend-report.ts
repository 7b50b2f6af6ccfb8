// Spend reports (docs/operations.md, "Spend reports"; ADR 0040): one account's or one workspace's
// usage over a UTC day or ISO week, from the ledger's usage rows: spend, requests, the top models and
// keys, and the monthly budgets' state. Sent as report.daily / report.weekly events by the scheduler
// and downloaded from the dashboard (JSON or CSV).
import { sql } from "kysely";
import { monthOf } from "../../core/ids.js";
import { formatUsd } from "../../core/money.js";
import type { Store } from "../../store/index.js";

const DAY_MS = 86_400_000;
const TOP = 5;

export type ReportPeriod = "daily" | "weekly";
export type ReportSubject = { kind: "account" | "workspace"; id: string };

export interface SpendReport {
  subject: "account" | "workspace";
  subject_id: string;
  period: ReportPeriod;
  from: string;
  to: string;
  spend_usd: string;
  requests: number;
  top_models: { model: string; spend_usd: string; requests: number }[];
  top_keys: { key_id: string; name: string; spend_usd: string; requests: number }[];
  budgets: { scope: string; month: string; limit_usd: string | null; spent_usd: string }[];
}

/** The last whole period before `now`: yesterday (UTC), or last ISO week (Monday to Monday). */
export function lastPeriod(period: ReportPeriod, now: number): { from: number; to: number } {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  if (period === "daily") return { from: today - DAY_MS, to: today };
  const weekday = (new Date(today).getUTCDay() + 6) % 7;
  const monday = today - weekday * DAY_MS;
  return { from: monday - 7 * DAY_MS, to: monday };
}

interface Group {
  name: string;
  cost: bigint;
  requests: bigint;
}

export async function spendReport(store: Store, subject: ReportSubject, period: ReportPeriod, window: { from: number; to: number }): Promise<SpendReport> {
  const db = store.db;
  const where = subject.kind === "account" ? sql`l.account_id = ${subject.id}` : sql`k.workspace_id = ${subject.id}`;
  const grouped = async (by: "model" | "key"): Promise<Group[]> => {
    const column = by === "model" ? sql`coalesce(l.model, '')` : sql`coalesce(l.key_id, '')`;
    const result = await sql<{ name: string; cost: bigint | string; requests: bigint | string }>`
      select ${column} as name, sum(l.cost_nano) as cost, count(*) as requests
      from ledger l left join keys k on k.id = l.key_id
      where l.kind = 'usage' and l.created_at >= ${BigInt(window.from)} and l.created_at < ${BigInt(window.to)} and ${where}
      group by ${column}`.execute(db);
    return result.rows
      .map((r) => ({ name: r.name, cost: BigInt(r.cost), requests: BigInt(r.requests) }))
      .sort((a, b) => (b.cost > a.cost ? 1 : b.cost < a.cost ? -1 : a.name.localeCompare(b.name)));
  };
  const models = await grouped("model");
  const keys = await grouped("key");
  const keyNames = new Map(
    keys.length === 0
      ? []
      : (
          await db
            .selectFrom("keys")
            .select(["id", "name"])
            .where(
              "id",
              "in",
              keys.slice(0, TOP).map((k) => k.name),
            )
            .execute()
        ).map((k) => [k.id, k.name]),
  );
  const spend = models.reduce((sum, m) => sum + m.cost, 0n);
  const requests = models.reduce((sum, m) => sum + m.requests, 0n);
  return {
    subject: subject.kind,
    subject_id: subject.id,
    period,
    from: new Date(window.from).toISOString(),
    to: new Date(window.to).toISOString(),
    spend_usd: formatUsd(spend),
    requests: Number(requests),
    top_models: models.slice(0, TOP).map((m) => ({ model: m.name, spend_usd: formatUsd(m.cost), requests: Number(m.requests) })),
    top_keys: keys.slice(0, TOP).map((k) => ({ key_id: k.name, name: keyNames.get(k.name) ?? "", spend_usd: formatUsd(k.cost), requests: Number(k.requests) })),
    budgets: await budgetStates(store, subject, monthOf(window.to - 1)),
  };
}

/** The subject's monthly USD budgets in the month the period ends in, with what is spent. */
async function budgetStates(store: Store, subject: ReportSubject, month: string): Promise<SpendReport["budgets"]> {
  if (subject.kind === "account") {
    const account = await store.db.selectFrom("accounts").select(["monthly_budget_nano"]).where("id", "=", subject.id).executeTakeFirst();
    const usage = await store.db.selectFrom("monthly_usage").select("cost_nano").where("account_id", "=", subject.id).where("month", "=", month).executeTakeFirst();
    const limit = account?.monthly_budget_nano ?? null;
    return [{ scope: `account:${subject.id}`, month, limit_usd: limit === null ? null : formatUsd(limit), spent_usd: formatUsd(usage?.cost_nano ?? 0n) }];
  }
  const workspace = await store.db.selectFrom("workspaces").select(["monthly_budget_nano"]).where("id", "=", subject.id).executeTakeFirst();
  const scope = `workspace:${subject.id}`;
  const usage = await store.db.selectFrom("budget_usage").select(["month", "cost_nano"]).where("scope", "=", scope).executeTakeFirst();
  const limit = workspace?.monthly_budget_nano ?? null;
  return [{ scope, month, limit_usd: limit === null ? null : formatUsd(limit), spent_usd: formatUsd(usage?.month === month ? usage.cost_nano : 0n) }];
}

/** The subjects with usage in the window: every account, and every workspace through its keys. */
export async function reportSubjects(store: Store, window: { from: number; to: number }): Promise<ReportSubject[]> {
  const result = await sql<{ account_id: string; workspace_id: string | null }>`
    select distinct l.account_id, k.workspace_id from ledger l left join keys k on k.id = l.key_id
    where l.kind = 'usage' and l.created_at >= ${BigInt(window.from)} and l.created_at < ${BigInt(window.to)}`.execute(store.db);
  const accounts = new Set(result.rows.map((r) => r.account_id));
  const workspaces = new Set(result.rows.flatMap((r) => (r.workspace_id === null ? [] : [r.workspace_id])));
  return [...[...accounts].map((id) => ({ kind: "account" as const, id })), ...[...workspaces].map((id) => ({ kind: "workspace" as const, id }))];
}

/** The report as CSV: one header line, then one line per figure (section, name, spend, requests). */
export function reportCsv(report: SpendReport): string {
  const lines = ["section,name,spend_usd,requests"];
  // Quoted when needed; a leading formula character is defused for spreadsheets.
  const cell = (raw: string) => {
    const text = /^[=+\-@]/.test(raw) ? `'${raw}` : raw;
    return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  lines.push(`total,${cell(`${report.subject} ${report.subject_id} ${report.from}..${report.to}`)},${report.spend_usd},${report.requests}`);
  for (const m of report.top_models) lines.push(`model,${cell(m.model)},${m.spend_usd},${m.requests}`);
  for (const k of report.top_keys) lines.push(`key,${cell(`${k.key_id} ${k.name}`)},${k.spend_usd},${k.requests}`);
  for (const b of report.budgets) lines.push(`budget,${cell(`${b.scope} ${b.month} limit ${b.limit_usd ?? "none"}`)},${b.spent_usd},`);
  return `${lines.join("\n")}\n`;
}
