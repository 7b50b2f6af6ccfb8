// Row types of every table, as both drivers return them: all integers as bigint (SQLite with
// safeIntegers, PostgreSQL int8 parsed to BigInt), timestamps as epoch milliseconds, flags as 0/1.
import { CACHE_SAVING_COLUMN, type DimensionCostColumn, type DimensionCountColumn } from "../core/dimensions.js";
import type { ColumnType, Generated } from "kysely";

import type { Int, Stamp } from "./column-types.js";
import type {
  AccountEscrowsTable,
  AdminIdempotencyTable,
  AdminTokensTable,
  AuditLogTable,
  CatalogHeadTable,
  CatalogVersionsTable,
  FileKeyStatesTable,
  GatewayLeasesTable,
  GatewayProcessesTable,
  HealthProbeResultsTable,
  McpServerSecretsTable,
  ProviderKeysTable,
  RedemptionCodesTable,
  RequestLogTable,
  StripeEventsTable,
  CacheSettingsTable,
  McpSessionsTable,
  StoredResponsesTable,
  VideoTasksTable,
} from "./tables-operations.js";

export * from "./tables-operations.js";
export * from "./tables-alerts.js";
import type { AlertDeliveriesTable, AlertEventsTable, AlertSubscriptionsTable, ScheduledRunsTable } from "./tables-alerts.js";

export interface AccountsTable {
  id: string;
  email: string;
  password_hash: string | null;
  status: "active" | "suspended" | "closed";
  tier: string;
  is_admin: Int;
  balance_nano: Int;
  total_spent_nano: Int;
  held_nano: Int;
  held_tokens: Int;
  monthly_budget_nano: Int | null;
  monthly_token_budget: Int | null;
  default_model: string | null;
  /** 1: a request the limits cannot fully cover is admitted with a lowered output limit (migration 0009). */
  clamp_output: ColumnType<Int, Int | undefined, Int>;
  /** The account's rate and concurrency limits as JSON (src/core/traffic-limits.ts); null: the tier's (migration 0012). */
  limits: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Stamp;
  updated_at: Stamp;
  /** The hash of the account's latest ledger row (migration 0010); null: none yet. */
  ledger_head: ColumnType<string | null, never, string | null>;
  /** What the oldest remaining ledger row chains to after a prune; null: the genesis value. */
  ledger_anchor: ColumnType<string | null, never, string | null>;
  /** The net effect on the balance of the ledger rows `ledger prune` deleted (migration 0023). */
  pruned_balance_nano: ColumnType<Int, never, Int>;
  /** The cost of the usage rows `ledger prune` deleted (migration 0023). */
  pruned_spent_nano: ColumnType<Int, never, Int>;
}

export type KeyStatus = "enabled" | "exhausted" | "revoked";

/** A key's periodic budget window (migration 0013). */
export type KeyPeriod = "day" | "week" | "month";

export interface KeysTable {
  id: string;
  account_id: string;
  workspace_id: string | null;
  name: string;
  prefix: string;
  hash: string;
  status: KeyStatus;
  budget_cap_nano: Int | null;
  spent_nano: Int;
  token_cap: Int | null;
  tokens_used: Int;
  held_nano: Int;
  held_tokens: Int;
  /** 1: clamping allowed for this key (and its account's setting) (migration 0009). */
  clamp_output: ColumnType<Int, Int | undefined, Int>;
  /** Key policies (migration 0013): JSON arrays of model ids and CIDR ranges; null: no restriction. */
  allowed_models: ColumnType<string | null, string | null | undefined, string | null>;
  allowed_networks: ColumnType<string | null, string | null | undefined, string | null>;
  /** The MCP servers and tools the key may use at /mcp (migration 0031): JSON array; null: every one. */
  allowed_mcp: ColumnType<string | null, string | null | undefined, string | null>;
  /** Epoch ms after which the key is refused (401 key_expired); null: never. */
  expires_at: ColumnType<Stamp | null, Stamp | null | undefined, Stamp | null>;
  /** The periodic budget's window (UTC); null: none. */
  period: ColumnType<KeyPeriod | null, KeyPeriod | null | undefined, KeyPeriod | null>;
  period_budget_nano: ColumnType<Int | null, Int | null | undefined, Int | null>;
  period_token_cap: ColumnType<Int | null, Int | null | undefined, Int | null>;
  /** Start (epoch ms) of the period the two counters below belong to; before the current period's start they count as 0. */
  period_started_at: ColumnType<Int, Int | undefined, Int>;
  period_spent_nano: ColumnType<Int, Int | undefined, Int>;
  period_tokens_used: ColumnType<Int, Int | undefined, Int>;
  /** The key's rate and concurrency limits as JSON (src/core/traffic-limits.ts); null: the tier's (migration 0012). */
  limits: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON array of the `selected` guardrails the key switches on (migration 0036); null: none. */
  guardrails: ColumnType<string | null, string | null | undefined, string | null>;
  /** The key's default tags as a JSON object {key: value} (core/request-tags.ts); null: none (migration 0030). */
  default_tags: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Stamp;
  updated_at: Stamp;
  revoked_at: Stamp | null;
  last_used_at: Stamp | null;
  /** The cost and the tokens of the key's usage rows `ledger prune` deleted (migration 0023). */
  pruned_spent_nano: ColumnType<Int, never, Int>;
  pruned_tokens: ColumnType<Int, never, Int>;
}

export interface KeyAllocationsTable {
  id: Generated<Int>;
  key_id: string;
  account_id: string;
  budget_cap_nano: Int | null;
  token_cap: Int | null;
  reason: string;
  actor_account_id: string | null;
  created_at: Stamp;
}

export type LedgerKind = "usage" | "credit" | "debit";

/** A count and a cost column per dimension of src/core/dimensions.ts (migration 0008 and later), and the cache saving. */
// Default 0 (rows of other kinds, and rows written before the column existed): optional on insert.
type DefaultZero = ColumnType<Int, Int | undefined, Int>;
export type LedgerDimensionColumns = { [C in DimensionCountColumn | DimensionCostColumn]: C extends "input_tokens" | "cached_tokens" | "output_tokens" ? Int : DefaultZero } & {
  [CACHE_SAVING_COLUMN]: DefaultZero;
};

export interface LedgerTable extends LedgerDimensionColumns {
  id: Generated<Int>;
  created_at: Stamp;
  account_id: string;
  key_id: string | null;
  request_id: string;
  kind: LedgerKind;
  model: string | null;
  provider: string | null;
  route: string | null;
  input_tokens: Int;
  cached_tokens: Int;
  output_tokens: Int;
  reasoning_tokens: Int;
  cost_nano: Int;
  estimated: Int;
  note: string | null;
  /** The routing group's deployment that served (migration 0007); null otherwise. */
  deployment: string | null;
  /** Upstream attempts of a usage row (migration 0011); null when not counted. */
  attempts: bigint | null;
  /** The price factor of the account's tier in millionths (migration 0026; src/core/price-factor.ts); null: none, list prices. */
  price_factor_ppm: bigint | null;
  /** The chain hash (migration 0010), set by the database's trigger on insert: never written by code. */
  hash: ColumnType<string | null, never, never>;
}

/** From ledger id from_id on, the chain is keyed with the key named key_id (migration 0023; ledger-chain-key.ts). Append-only. */
export interface LedgerChainKeysTable {
  from_id: Int;
  key_id: string;
  created_at: Stamp;
  /** HMAC under that key of the record (ledger-chain-key.ts epochText). */
  mac: string;
}

export interface MonthlyUsageTable {
  account_id: string;
  month: string;
  cost_nano: Int;
  tokens: Int;
  requests: Int;
}

export interface HoldsTable {
  id: string;
  account_id: string;
  key_id: string | null;
  request_id: string;
  amount_nano: Int;
  tokens: Int;
  created_at: Stamp;
  expires_at: Stamp;
  /** What admission counted against rate and concurrency limits (traffic-limits.ts); null: nothing (migration 0012). */
  traffic: ColumnType<string | null, string | null | undefined, string | null>;
  /** The budget scopes the hold reserved in, as a JSON array (billing/budget-scopes.ts); null: none (migration 0029). */
  budgets: ColumnType<string | null, string | null | undefined, string | null>;
  /** The request's tags as a JSON array of "key=value" texts (core/request-tags.ts); null: none (migration 0030). */
  tags: ColumnType<string | null, string | null | undefined, string | null>;
  /** The process that took the hold (gateway_processes); null: it ends only at expires_at (migration 0040). */
  holder: ColumnType<string | null, string | null | undefined, string | null>;
}

/** One tag of a charged ledger row (migration 0030): its cost and tokens kept for breakdowns by tag. */
export interface LedgerTagsTable {
  ledger_id: Int;
  /** "key=value". */
  tag: string;
  account_id: string;
  created_at: Stamp;
  cost_nano: Int;
  tokens: Int;
}

/** A monthly budget on a tag (migration 0030), gateway-wide (account_id null) or for one account. */
export interface TagBudgetsTable {
  /** The budget scope: "tag:<key=value>" or "tag@<account>:<key=value>" (core/request-tags.ts tagScope). */
  scope: string;
  tag: string;
  account_id: string | null;
  monthly_budget_nano: Int | null;
  monthly_token_budget: Int | null;
  created_at: Stamp;
  updated_at: Stamp;
}

export interface BudgetUsageTable {
  /** "workspace:<id>" or "member:<workspace>:<account>" (migration 0029). */
  scope: string;
  /** The UTC month ("YYYY-MM") cost_nano and tokens belong to; in a later month they count as 0. */
  month: string;
  cost_nano: Int;
  tokens: Int;
  held_nano: Int;
  held_tokens: Int;
}

export interface TrafficWindowsTable {
  /** "key:<id>", "account:<id>", and "|model:<id>" appended for a model's own limit. */
  scope: string;
  window_start: Stamp;
  requests: Int;
  tokens: Int;
  in_flight: Int;
}

export interface UpstreamKeysTable {
  id: string;
  account_id: string;
  provider: string;
  label: string;
  ciphertext: string;
  fingerprint: string;
  last4: string;
  created_at: Stamp;
}

export interface WorkspacesTable {
  id: string;
  name: string;
  created_by: string;
  created_at: Stamp;
  /** The workspace's monthly budgets and each member's (migration 0029); null: none. */
  monthly_budget_nano: ColumnType<Int | null, Int | null | undefined, Int | null>;
  monthly_token_budget: ColumnType<Int | null, Int | null | undefined, Int | null>;
  member_monthly_budget_nano: ColumnType<Int | null, Int | null | undefined, Int | null>;
  /** JSON array of the model ids the workspace's keys may use; null: no restriction. */
  allowed_models: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON array of the `selected` guardrails the workspace's keys get (migration 0036); null: none. */
  guardrails: ColumnType<string | null, string | null | undefined, string | null>;
  /** The MCP servers and tools the workspace's keys may use (migration 0031): JSON array; null: every one. */
  allowed_mcp: ColumnType<string | null, string | null | undefined, string | null>;
}

export type Role = "owner" | "admin" | "member";

export interface MembershipsTable {
  workspace_id: string;
  account_id: string;
  role: Role;
  created_at: Stamp;
}

export interface InvitesTable {
  id: string;
  workspace_id: string;
  token_hash: string;
  role: Exclude<Role, "owner">;
  email: string | null;
  created_by: string;
  created_at: Stamp;
  expires_at: Stamp;
  used_at: Stamp | null;
  used_by: string | null;
}

export interface SessionsTable {
  id: string;
  account_id: string;
  csrf_token: string;
  created_at: Stamp;
  expires_at: Stamp;
}

/** Single-use set-password links (migration 0024): only the SHA-256 of the token is stored. */
export interface PasswordLinksTable {
  id: string;
  account_id: string;
  token_hash: string;
  /** setup: the account had no password when the link was issued; reset: it had one. */
  purpose: "setup" | "reset";
  created_at: Stamp;
  expires_at: Stamp;
  used_at: Stamp | null;
}

export interface ShowAgainTokensTable {
  token_hash: string;
  account_id: string;
  key_id: string;
  ciphertext: string;
  created_at: Stamp;
  expires_at: Stamp;
}

export interface AuthEventsTable {
  seq: Generated<Int>;
  key_hash: string | null;
  account_id: string | null;
  created_at: ColumnType<Stamp, Stamp, never>;
}

/** One sign-in or redemption attempt of a subject, while it is inside its throttle's window. */
export interface AttemptsTable {
  id: string;
  subject: string;
  at: Stamp;
}

export interface UpstreamHealthTable {
  scope: string;
  state: "open" | "closed";
  opened_until: Generated<Stamp>;
  changed_at: Generated<Stamp>;
  requests: Generated<Int>;
  failures: Generated<Int>;
  p50_ms: Int | null;
  stats_at: Generated<Stamp>;
  /** The key's latest upstream error, e.g. "HTTP 503" (migration 0016); null: none seen. */
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
  last_error_at: Generated<Stamp>;
  /** When the key's 429 cooldown ends (epoch ms); 0: never cooled down. */
  cooldown_until: Generated<Stamp>;
}

export interface Database {
  accounts: AccountsTable;
  keys: KeysTable;
  key_allocations: KeyAllocationsTable;
  ledger: LedgerTable;
  ledger_chain_keys: LedgerChainKeysTable;
  monthly_usage: MonthlyUsageTable;
  holds: HoldsTable;
  account_escrows: AccountEscrowsTable;
  traffic_windows: TrafficWindowsTable;
  budget_usage: BudgetUsageTable;
  ledger_tags: LedgerTagsTable;
  tag_budgets: TagBudgetsTable;
  upstream_keys: UpstreamKeysTable;
  workspaces: WorkspacesTable;
  memberships: MembershipsTable;
  invites: InvitesTable;
  sessions: SessionsTable;
  show_again_tokens: ShowAgainTokensTable;
  video_tasks: VideoTasksTable;
  stored_responses: StoredResponsesTable;
  auth_events: AuthEventsTable;
  upstream_health: UpstreamHealthTable;
  attempts: AttemptsTable;
  admin_tokens: AdminTokensTable;
  audit_log: AuditLogTable;
  admin_idempotency: AdminIdempotencyTable;
  request_log: RequestLogTable;
  redemption_codes: RedemptionCodesTable;
  catalog_versions: CatalogVersionsTable;
  provider_keys: ProviderKeysTable;
  mcp_server_secrets: McpServerSecretsTable;
  catalog_head: CatalogHeadTable;
  password_links: PasswordLinksTable;
  file_key_states: FileKeyStatesTable;
  gateway_leases: GatewayLeasesTable;
  gateway_processes: GatewayProcessesTable;
  health_probe_results: HealthProbeResultsTable;
  stripe_events: StripeEventsTable;
  cache_settings: CacheSettingsTable;
  mcp_sessions: McpSessionsTable;
  alert_subscriptions: AlertSubscriptionsTable;
  alert_events: AlertEventsTable;
  alert_deliveries: AlertDeliveriesTable;
  scheduled_runs: ScheduledRunsTable;
}
