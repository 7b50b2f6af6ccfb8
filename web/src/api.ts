// The dashboard API from the browser: same-origin fetch with the session cookie, the CSRF token on
// every write, and errors turned into ApiError carrying the catalogue's error type and the request id.
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly requestId: string | null,
  ) {
    super(message);
  }
}

// What to tell a person for each error type; the API's own message follows it.
const HINTS: Record<string, string> = {
  unauthenticated: "You are not signed in.",
  forbidden: "You are not allowed to do this.",
  invalid_request: "Please check the form.",
  not_found: "It does not exist (or is not yours).",
  invite_used: "This invite has already been used.",
  invite_expired: "This invite has expired; ask for a new one.",
  already_member: "You are already a member of this workspace.",
  key_show_expired: "The key can no longer be shown. Revoke it and create a new one.",
  invalid_state: "Not possible in the key's current state.",
  conflict: "This change is not allowed.",
  sub_key_limit_reached: "You already have 50 enabled keys; revoke one first.",
  account_not_found: "That account does not exist.",
  account_suspended: "This account is suspended or closed.",
  workspace_write_failed: "The change could not be saved and nothing changed; try again.",
  rate_limit_error: "Too many attempts; wait a moment.",
  code_not_redeemable: "The code cannot be redeemed.",
  password_link_invalid: "This link cannot be used.",
  balance_invariant: "The balance must stay between 0.00 and 1,000,000.00.",
  internal_error: "Something went wrong on the server.",
};

export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    const hint = HINTS[error.type];
    const detail = hint && hint !== error.message ? `${hint} ${error.message}` : error.message;
    return `${detail} (${error.type}${error.requestId ? `, request ${error.requestId}` : ""})`;
  }
  return error instanceof Error ? error.message : String(error);
}

let csrfToken: string | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET" && csrfToken) headers["x-csrf-token"] = csrfToken;
  let response: Response;
  try {
    response = await fetch(`/dashboard/api${path}`, { method, headers, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, "network_error", "The gateway could not be reached.", null);
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    const error = (parsed as { error?: { type?: string; message?: string } } | null)?.error;
    throw new ApiError(response.status, error?.type ?? "internal_error", error?.message ?? `HTTP ${response.status}`, response.headers.get("x-request-id"));
  }
  return parsed as T;
}

export interface Account {
  id: string;
  email: string;
  status: "active" | "suspended" | "closed";
  is_admin: boolean;
  tier: string;
  balance_usd: string;
  total_spent_usd: string;
  /** Output clamping (docs/billing.md, "Clamping"). */
  clamp_output: boolean;
  /** The account's own rate and concurrency limits (docs/billing.md); null: the tier's apply. */
  limits?: KeyLimits | null;
  created_at: string;
}

/** An account as the administrator routes show it. */
export interface AdminAccount extends Account {
  held_usd: string;
  monthly_budget_usd: string | null;
  monthly_token_budget: number | null;
  default_model: string | null;
  /** Whether the person can sign in: false until their set-password link is used. */
  password_set: boolean;
}

/** A set-password link as an administrator receives it: shown once. */
export interface PasswordLink {
  object: "password_link";
  id: string;
  account_id: string;
  /** setup: the account had no password; reset: it had one (which works until the link is used). */
  purpose: "setup" | "reset";
  url: string;
  expires_at: string;
}

/** Who may create an account on the sign-in page (server.signup). */
export type SignupMode = "open" | "invite" | "closed";

/** A ledger row as GET /ledger and GET /admin/accounts/:id/ledger return it. */
export interface LedgerRow {
  id: string;
  created_at: string;
  kind: string;
  key_name: string | null;
  key_id: string | null;
  model: string | null;
  input_tokens: number;
  output_tokens: number;
  cost_usd: string;
  note: string | null;
}

/** What sign-in and the session route answer. */
export interface SessionInfo {
  account: Account;
  csrf_token: string;
}

export interface KeyPolicy {
  allowed_models: string[] | null;
  /** The `selected` guardrails the key switches on (absent from an older gateway). */
  guardrails?: string[];
  allowed_networks: string[] | null;
  /** MCP servers and tools the key may use at /mcp; null: every one. Absent from older gateways. */
  allowed_mcp?: string[] | null;
  /** Tags every request of the key carries; null: none. */
  default_tags: Record<string, string> | null;
  expires_at: string | null;
  expired: boolean;
  periodic_budget: null | {
    period: "day" | "week" | "month";
    budget_usd: string | null;
    token_cap: number | null;
    spent_usd: string;
    tokens_used: number;
    period_start: string;
    resets_at: string;
  };
}

export interface LimitSet {
  requests_per_minute?: number;
  tokens_per_minute?: number;
  concurrent_requests?: number;
}

export interface KeyLimits extends LimitSet {
  models?: Record<string, LimitSet>;
}

/** One limit that applies to a key, with the current minute's use (src/billing/traffic-usage.ts). */
export interface TrafficUse {
  subject: "key" | "account";
  model: string | null;
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
  concurrent_requests: number | null;
  requests: number;
  tokens: number;
  in_flight: number;
  resets_at: string | null;
}

export interface Key {
  id: string;
  account_id: string;
  workspace_id: string | null;
  name: string;
  prefix: string;
  status: "enabled" | "exhausted" | "revoked";
  budget_cap_usd: string | null;
  spent_usd: string;
  token_cap: number | null;
  tokens_used: number;
  /** Output clamping (docs/billing.md, "Clamping"). */
  clamp_output: boolean;
  /** The stored status, or "expired" once the key's policy expiry has come. */
  effective_status: "enabled" | "exhausted" | "revoked" | "expired";
  /** Key policies (docs/dashboard.md, "Key policies"). */
  policy: KeyPolicy;
  /** The key's own rate and concurrency limits (docs/billing.md); null: the tier's apply. */
  limits: KeyLimits | null;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
  owner_email?: string | null;
}

export interface Totals {
  requests: number;
  input_tokens: number;
  output_tokens: number;
  tokens: number;
  cost_usd: string;
  cached_tokens: number;
  reasoning_tokens: number;
  /** One entry per pricing dimension: its count (keyed tokens, calls, requests, images or seconds) and cost_usd. */
  dimensions: Record<string, Record<string, number | string>>;
  cache: CacheTotals;
}

export interface CacheTotals {
  read_tokens: number;
  read_cost_usd: string;
  write_tokens: number;
  write_cost_usd: string;
  /** Cached input / all input, 6 decimals; null without input. */
  hit_ratio: string | null;
  /** Signed: negative when cache writes cost more than the reads saved. */
  saving_usd: string;
}

export interface UsageSummary {
  start: string;
  end: string;
  days: number;
  totals: Totals;
  by_day: Array<Totals & { day: string }>;
  by_key: Array<Totals & { key_id: string | null; name: string | null; prefix: string | null; status: string; owner_email: string | null }>;
  by_model: Array<Totals & { model: string }>;
  /** Spend per tag (x-gateway-tags and the keys' default tags). */
  by_tag: TagUsage[];
  /** Spend per workspace of the keys; workspace_id null: keys in none (or deleted). */
  by_workspace: Array<Totals & { workspace_id: string | null; name: string | null }>;
  /** Spend per member: the account owning the keys. */
  by_member: Array<Totals & { account_id: string; email: string | null }>;
}

export interface TagUsage {
  tag: string;
  requests: number;
  cost_usd: string;
  tokens: number;
}

export interface Workspace {
  id: string;
  name: string;
  created_by: string;
  created_at: string;
  role?: "owner" | "admin" | "member";
  members?: number;
}

/** A budget scope's limits and use this month (GET …/workspaces/:id/budgets, GET /v1/me). */
export interface BudgetUse {
  usd: string | null;
  tokens: number | null;
  spent_usd: string;
  tokens_used: number;
  held_usd: string;
  held_tokens: number;
  remaining_usd: string | null;
  remaining_tokens: number | null;
}

export interface WorkspaceBudgets {
  workspace_id: string;
  name: string;
  month: string;
  resets_at: string;
  allowed_models: string[] | null;
  guardrails?: string[];
  member_monthly_budget_usd: string | null;
  budget: BudgetUse;
  members: Array<{ account_id: string; email: string; role: "owner" | "admin" | "member"; budget: BudgetUse }>;
}

export interface Invite {
  id: string;
  role: "admin" | "member";
  state: "pending" | "used" | "expired";
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

/** One circuit breaker as the gateway processes last wrote it (GET /admin/upstreams). */

export * from "./api-catalog.js";
