// The alert event catalogue (docs/api-contract.md, "Webhooks"; ADR 0040): what a subscription may
// ask for, and the budget thresholds a crossing is reported at. Shared by the outbox (store), the
// code that notices events (config, pipeline, admin) and the OpenAPI description's webhooks.

export const ALERT_EVENT_TYPES = [
  /** A budget or cap reached 50, 80 or 100% in its period (account, key, workspace, member, tag). */
  "budget.threshold",
  /** A key's lifetime cap is used up: it is refused until an administrator raises the cap. */
  "key.exhausted",
  /** An account's prepaid balance reached zero. */
  "balance.depleted",
  /** A provider key was disabled (refused by its upstream with 401/403, or by an operator). */
  "provider_key.disabled",
  /** An upstream key's circuit breaker opened. */
  "upstream.breaker_open",
  /** The served config or catalog changed (a reload or a catalog version). */
  "config.changed",
  /** The scheduled ledger verify found a broken link or a figure that differs. */
  "ledger.verify_failed",
  /** An account was credited (a redemption code, an administrator's credit, a card top-up). */
  "credit.added",
  /** The daily and weekly spend summaries of an account or a workspace. */
  "report.daily",
  "report.weekly",
  /** Sent by "send test event" to one subscription. */
  "test",
] as const;

export type AlertEventType = (typeof ALERT_EVENT_TYPES)[number];

export function isAlertEventType(value: string): value is AlertEventType {
  return (ALERT_EVENT_TYPES as readonly string[]).includes(value);
}

/** The shares of a limit at which a crossing is reported, in percent. */
export const BUDGET_THRESHOLDS = [50, 80, 100] as const;

/** The thresholds `used` has reached of `limit` (none when the limit is 0 or absent). */
export function reachedThresholds(used: bigint, limit: bigint | null): number[] {
  if (limit === null || limit <= 0n) return [];
  return BUDGET_THRESHOLDS.filter((percent) => used * 100n >= limit * BigInt(percent));
}

/** An event as noticed, before the outbox gives it an id. */
export interface AlertEventInput {
  type: AlertEventType;
  /** Unique per event: a second notice of the same crossing or period is dropped (UNIQUE in alert_events). */
  dedupKey: string;
  /** The workspace whose subscriptions receive it too (the operator's receive every event). */
  workspaceId?: string | null;
  accountId?: string | null;
  data: Record<string, unknown>;
}
