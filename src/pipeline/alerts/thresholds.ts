// Budget and cap crossings (ADR 0040), noticed after settlement commits, never inside it: each settled
// hold's key, account and budget scopes are queued, and a pass shortly after reads their figures and
// records an event for every threshold reached (50/80/100%). Level-triggered with a dedup key per
// scope, period, limit and threshold (UNIQUE in alert_events): every process may notice a crossing,
// one event exists; one missed by a process that stopped is noticed at the scope's next settlement.
// Without an enabled subscription nothing is queued (the request path pays one Map lookup at most).
import type { Logger } from "pino";
import { reachedThresholds, type AlertEventInput } from "../../core/alert-events.js";
import { parseScope } from "../../core/budget-scopes.js";
import { monthOf } from "../../core/ids.js";
import { formatUsd } from "../../core/money.js";
import type { Hold } from "../../billing/types.js";
import type { Store } from "../../store/index.js";

const FLUSH_DELAY_MS = 100;
const ACTIVE_REFRESH_MS = 2_000;
/** Dedup keys this process recorded or found recorded; cleared when it grows past this. */
const MAX_REMEMBERED = 50_000;

interface Noticed {
  accountId: string;
  keyId: string;
  scopes: Set<string>;
}

/** A budget scope's limits (monthly), or null when the scope has none this resolver knows. */
export type ScopeLimits = { cost: bigint | null; tokens: bigint | null; workspaceId: string | null } | null;

/**
 * The limits of a budget scope by its name: a tag's from tag_budgets, workspace and member scopes
 * from the workspace's row. A later kind of scope adds its branch here; everything else covers it.
 */
export async function limitsOfScope(store: Store, scope: string): Promise<ScopeLimits> {
  if (scope.startsWith("tag:") || scope.startsWith("tag@")) {
    // A tag's budget (core/request-tags.ts tagScope): gateway-wide or one account's, in tag_budgets.
    const tag = await store.db.selectFrom("tag_budgets").select(["monthly_budget_nano", "monthly_token_budget"]).where("scope", "=", scope).executeTakeFirst();
    return tag ? { cost: tag.monthly_budget_nano, tokens: tag.monthly_token_budget, workspaceId: null } : null;
  }
  const parsed = parseScope(scope);
  if (parsed === null) return null;
  const row = await store.db
    .selectFrom("workspaces")
    .select(["monthly_budget_nano", "monthly_token_budget", "member_monthly_budget_nano"])
    .where("id", "=", parsed.workspaceId)
    .executeTakeFirst();
  if (!row) return null;
  return parsed.accountId === null
    ? { cost: row.monthly_budget_nano, tokens: row.monthly_token_budget, workspaceId: parsed.workspaceId }
    : { cost: row.member_monthly_budget_nano, tokens: null, workspaceId: parsed.workspaceId };
}

export class ThresholdWatcher {
  readonly #pending = new Map<string, Noticed>();
  readonly #remembered = new Set<string>();
  #active = false;
  #activeAt = 0;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | null = null;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Whether any subscription is enabled (re-read every few seconds, behind the request path). */
  async refreshActive(): Promise<void> {
    this.#activeAt = this.clock();
    this.#active = await this.store.alerts.anyEnabled().catch(() => this.#active);
  }

  /** A hold was settled: its figures are checked shortly, off the request path. */
  notice(hold: Pick<Hold, "accountId" | "keyId" | "budgets">): void {
    if (this.clock() - this.#activeAt > ACTIVE_REFRESH_MS) void this.refreshActive();
    if (!this.#active) return;
    const noticed = this.#pending.get(hold.keyId) ?? { accountId: hold.accountId, keyId: hold.keyId, scopes: new Set<string>() };
    for (const scope of hold.budgets ?? []) noticed.scopes.add(scope);
    this.#pending.set(hold.keyId, noticed);
    this.#timer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
  }

  /** Checks every queued key, account and scope; one pass at a time. */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#flushing;
    const batch = [...this.#pending.values()];
    this.#pending.clear();
    if (batch.length === 0) return;
    this.#flushing = this.#check(batch)
      .catch((err: unknown) => this.logger.warn({ err }, "checking budget thresholds failed"))
      .finally(() => {
        this.#flushing = null;
      });
    await this.#flushing;
  }

  async stop(): Promise<void> {
    await this.flush();
  }

  async #check(batch: Noticed[]): Promise<void> {
    const now = this.clock();
    const events: AlertEventInput[] = [];
    const accounts = new Set<string>();
    const scopes = new Set<string>();
    for (const noticed of batch) {
      accounts.add(noticed.accountId);
      for (const scope of noticed.scopes) scopes.add(scope);
      events.push(...(await this.#keyEvents(noticed.keyId)));
    }
    for (const accountId of accounts) events.push(...(await this.#accountEvents(accountId, now)));
    for (const scope of scopes) events.push(...(await this.#scopeEvents(scope, now)));
    for (const event of events) {
      if (this.#remembered.has(event.dedupKey)) continue;
      await this.store.alerts.record(event, now);
      if (this.#remembered.size >= MAX_REMEMBERED) this.#remembered.clear();
      this.#remembered.add(event.dedupKey);
    }
  }

  async #keyEvents(keyId: string): Promise<AlertEventInput[]> {
    const key = await this.store.db.selectFrom("keys").selectAll().where("id", "=", keyId).executeTakeFirst();
    if (!key) return [];
    const base = { accountId: key.account_id, workspaceId: key.workspace_id };
    const scope = `key:${key.id}`;
    const events = [
      ...crossings({ ...base, scope, unit: "USD", period: "lifetime", used: key.spent_nano, limit: key.budget_cap_nano, keyId: key.id }),
      ...crossings({ ...base, scope, unit: "tokens", period: "lifetime", used: key.tokens_used, limit: key.token_cap, keyId: key.id }),
    ];
    if (key.period !== null) {
      const period = `${key.period}:${new Date(Number(key.period_started_at)).toISOString()}`;
      events.push(...crossings({ ...base, scope: `key_period:${key.id}`, unit: "USD", period, used: key.period_spent_nano, limit: key.period_budget_nano, keyId: key.id }));
      events.push(...crossings({ ...base, scope: `key_period:${key.id}`, unit: "tokens", period, used: key.period_tokens_used, limit: key.period_token_cap, keyId: key.id }));
    }
    for (const [used, limit, unit] of [
      [key.spent_nano, key.budget_cap_nano, "USD"],
      [key.tokens_used, key.token_cap, "tokens"],
    ] as const) {
      if (limit !== null && limit > 0n && used >= limit) {
        events.push({
          type: "key.exhausted",
          dedupKey: `key.exhausted:${key.id}:${unit}:${limit}`,
          ...base,
          data: { key_id: key.id, account_id: key.account_id, workspace_id: key.workspace_id, unit, limit: figure(limit, unit), used: figure(used, unit) },
        });
      }
    }
    return events;
  }

  async #accountEvents(accountId: string, now: number): Promise<AlertEventInput[]> {
    const account = await this.store.db
      .selectFrom("accounts")
      .select(["id", "balance_nano", "monthly_budget_nano", "monthly_token_budget"])
      .where("id", "=", accountId)
      .executeTakeFirst();
    if (!account) return [];
    const month = monthOf(now);
    const events: AlertEventInput[] = [];
    if (account.monthly_budget_nano !== null || account.monthly_token_budget !== null) {
      const usage = await this.store.db
        .selectFrom("monthly_usage")
        .select(["cost_nano", "tokens"])
        .where("account_id", "=", accountId)
        .where("month", "=", month)
        .executeTakeFirst();
      const base = { accountId, workspaceId: null, scope: `account:${accountId}`, period: month };
      events.push(...crossings({ ...base, unit: "USD", used: usage?.cost_nano ?? 0n, limit: account.monthly_budget_nano }));
      events.push(...crossings({ ...base, unit: "tokens", used: usage?.tokens ?? 0n, limit: account.monthly_token_budget }));
    }
    if (account.balance_nano <= 0n) {
      // Once per depletion: the dedup key names the latest credit, so a top-up re-arms it.
      const credit = await this.store.db
        .selectFrom("ledger")
        .select((eb) => eb.fn.max("id").as("id"))
        .where("account_id", "=", accountId)
        .where("kind", "=", "credit")
        .executeTakeFirst();
      events.push({
        type: "balance.depleted",
        dedupKey: `balance.depleted:${accountId}:${String(credit?.id ?? 0)}`,
        accountId,
        data: { account_id: accountId, balance_usd: formatUsd(account.balance_nano) },
      });
    }
    return events;
  }

  async #scopeEvents(scope: string, now: number): Promise<AlertEventInput[]> {
    const limits = await limitsOfScope(this.store, scope);
    if (limits === null) return [];
    const row = await this.store.db.selectFrom("budget_usage").select(["month", "cost_nano", "tokens"]).where("scope", "=", scope).executeTakeFirst();
    if (!row || row.month !== monthOf(now)) return [];
    const parsed = parseScope(scope);
    const base = { accountId: parsed?.accountId ?? null, workspaceId: limits.workspaceId, scope, period: row.month };
    return [...crossings({ ...base, unit: "USD", used: row.cost_nano, limit: limits.cost }), ...crossings({ ...base, unit: "tokens", used: row.tokens, limit: limits.tokens })];
  }
}

interface Figures {
  scope: string;
  unit: "USD" | "tokens";
  period: string;
  used: bigint;
  limit: bigint | null;
  accountId: string | null;
  workspaceId: string | null;
  keyId?: string;
}

/** USD amounts as decimal text (exact), tokens as integer text. */
function figure(value: bigint, unit: "USD" | "tokens"): string {
  return unit === "USD" ? formatUsd(value) : value.toString();
}

/** A budget.threshold event per threshold `used` has reached of `limit`. */
function crossings(f: Figures): AlertEventInput[] {
  return reachedThresholds(f.used, f.limit).map((percent) => ({
    type: "budget.threshold" as const,
    dedupKey: `budget:${f.scope}:${f.unit}:${f.period}:${String(f.limit)}:${percent}`,
    accountId: f.accountId,
    workspaceId: f.workspaceId,
    data: {
      scope: f.scope,
      scope_kind: f.scope.split(":")[0],
      account_id: f.accountId,
      workspace_id: f.workspaceId,
      ...(f.keyId !== undefined && { key_id: f.keyId }),
      threshold_percent: percent,
      unit: f.unit,
      used: figure(f.used, f.unit),
      limit: figure(f.limit ?? 0n, f.unit),
      period: f.period,
    },
  }));
}
