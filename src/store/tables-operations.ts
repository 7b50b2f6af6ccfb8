// Row types of the operators' tables: admin tokens, the audit log, admin idempotency, the request
// log, redemption codes and the live catalog (tables.ts has the accounts, keys and billing ones and
// the Database they form together). Integers and timestamps as in tables.ts.
import type { ColumnType, Generated } from "kysely";
import type { Int, Stamp } from "./column-types.js";

export interface AdminTokensTable {
  id: string;
  name: string;
  prefix: string;
  hash: string;
  /** Space-separated scopes (src/admin/scopes.ts). */
  scopes: string;
  created_at: Stamp;
  revoked_at: Stamp | null;
}

export type AuditActorType = "admin_token" | "dashboard" | "cli";

/** Append-only (migration 0014): the database refuses updates and deletes. */
export interface AuditLogTable {
  id: Generated<Int>;
  created_at: Stamp;
  actor_type: AuditActorType;
  actor_id: string | null;
  actor_name: string | null;
  action: string;
  target_type: string;
  target_id: string;
  /** JSON of the changed fields before the change; null for a creation. */
  before: string | null;
  /** JSON of the changed fields after the change; null for a removal. */
  after: string | null;
  client_address: string | null;
  request_id: string | null;
}

export interface AdminIdempotencyTable {
  key: string;
  request_hash: string;
  status: Int | null;
  response: string | null;
  created_at: Stamp;
}

/** One request, answered or refused (migration 0015): written in batches behind the request path, pruned by time. */
export interface RequestLogTable {
  id: Generated<Int>;
  /** When the request arrived (epoch ms). */
  created_at: Stamp;
  request_id: string;
  /** Null for a request no key was attributed to (administrators only see those). */
  account_id: string | null;
  key_id: string | null;
  method: string;
  /** The route pattern the request matched ("unmatched" for a 404), never its URL. */
  route: string;
  model: string | null;
  provider: string | null;
  deployment: string | null;
  status: Int;
  error_type: string | null;
  /** The error's message as the gateway wrote it, never text quoted from the request or an upstream (migration 0028). */
  error_message: string | null;
  /** The model id the client sent, also when no such model exists; null when it sent none (migration 0028). */
  requested_model: string | null;
  /** Guardrail decisions: "side:guardrail:action", comma-separated (migration 0034). */
  guardrails: string | null;
  latency_us: Int;
  first_byte_us: Int | null;
  attempts: Int | null;
  input_tokens: Int | null;
  cached_tokens: Int | null;
  output_tokens: Int | null;
  reasoning_tokens: Int | null;
  cost_nano: Int | null;
  /** 1 when the tokens were estimated by the gateway, 0 when the upstream reported them, null without usage. */
  estimated: Int | null;
  /** The request's tags, "key=value" texts joined by commas (migration 0030); null: none. */
  tags: ColumnType<string | null, string | null | undefined, string | null>;
}

/** Single-use top-up codes (migration 0016): only the hash of the code is stored. */
export interface RedemptionCodesTable {
  id: string;
  hash: string;
  prefix: string;
  value_nano: Int;
  batch: string | null;
  note: string | null;
  /** Who minted it, as the audit log names the actor. */
  created_by: string | null;
  created_at: Stamp;
  expires_at: Stamp;
  used_at: Stamp | null;
  /** The account that redeemed it. */
  used_by: string | null;
  revoked_at: Stamp | null;
}

/** Numbered, append-only versions of the catalog document (migration 0025). */
export interface CatalogVersionsTable {
  version: Int | number;
  /** The catalog document as JSON (src/config/catalog-document.ts): no provider keys in it. */
  document: string;
  created_at: Stamp | number;
  actor: string | null;
  reason: string;
}

/** The shared keys of the catalog's providers (catalog.source: database), encrypted at rest. */
/** A live catalog MCP server's header or environment value, encrypted (migration 0038). */
export interface McpServerSecretsTable {
  server: string;
  /** header | env */
  kind: string;
  name: string;
  ciphertext: string;
  last4: string;
  updated_at: Stamp | number;
}

export interface ProviderKeysTable {
  id: string;
  provider: string;
  label: string;
  ciphertext: string;
  fingerprint: string;
  last4: string;
  /** active | disabled */
  status: string;
  created_at: Stamp | number;
}

/** One row (id 1): a serial bumped by every catalog change, what every process watches. */
export interface CatalogHeadTable {
  id: number;
  serial: Int | number;
}

/** The state of a key of the config file (catalog.source: file), by provider and fingerprint (migration 0027). */
export interface FileKeyStatesTable {
  provider: string;
  fingerprint: string;
  last4: string;
  /** active | disabled */
  status: string;
  reason: string | null;
  changed_at: Stamp | number;
}

/** Named leases with an expiry: the one process holding one does its work (migration 0027). */
export interface GatewayLeasesTable {
  name: string;
  holder: string;
  expires_at: Int | number;
}

/** A serving gateway process's liveness, renewed while it lives; the sweeper releases the holds of one whose row ran out (migration 0040). */
export interface GatewayProcessesTable {
  holder: string;
  started_at: Int | number;
  expires_at: Int | number;
}

/** Each probed deployment's last active health probe (migration 0027). */
export interface HealthProbeResultsTable {
  scope: string;
  provider: string;
  model: string;
  ok: Int | number;
  status: Int | number | null;
  latency_ms: Int | number;
  error: string | null;
  checked_at: Stamp | number;
  failures_in_row: Int | number;
}

export type StripeEventStatus = "credited" | "debited" | "pending" | "confirmed" | "dismissed" | "ignored";

/** One Stripe event the gateway acted on (migration 0032), written with the ledger row it caused. */
export interface StripeEventsTable {
  /** Stripe's event id (evt_…). */
  id: string;
  type: string;
  /** The Checkout Session, charge or dispute the event is about. */
  object_id: string;
  account_id: string | null;
  payment_intent: string | null;
  /** On a credit row only (UNIQUE): one credit per Checkout Session. */
  checkout_session: string | null;
  /** What the event asks for, in nano-USD (a credit's or a debit's amount). */
  amount_nano: Int;
  /** What reached the ledger. */
  applied_nano: Int;
  /** On a credit row: the cents of its charge's refunds debited so far. */
  refunded_cents: Int;
  status: StripeEventStatus;
  reason: string | null;
  stripe_created_at: Stamp | null;
  received_at: Stamp;
  resolved_at: Stamp | null;
  resolved_by: string | null;
}

/** The response cache's opt-in per key or workspace (migration 0035, ADR 0044). */
export interface CacheSettingsTable {
  /** "key:<id>" or "workspace:<id>". */
  subject: string;
  ttl_seconds: Int;
  /** "account" (answers stay within the account) or "gateway" (shared, when the operator allows it). */
  scope: string;
  updated_at: Stamp;
}

/** The MCP gateway's sessions, shared by every gateway process (migration 0037, ADR 0045). */
export interface McpSessionsTable {
  /** The Mcp-Session-Id: random, unguessable. */
  id: string;
  key_id: string;
  created_at: Stamp;
  /** Written at most every few seconds per session and process (mcp-sessions-store.ts). */
  last_used_at: Stamp;
  closed_at: Stamp | null;
  close_reason: string | null;
  /** The protocol version the gateway answered the initialize with. */
  protocol_version: string;
  /** The client's initialize params (protocolVersion, capabilities, clientInfo) as JSON. */
  initialize_params: string;
}

export type VideoTaskStatus = "queued" | "in_progress" | "completed" | "failed" | "expired";

export interface VideoTasksTable {
  id: string;
  account_id: string;
  key_id: string;
  request_id: string;
  model: string;
  provider: string;
  upstream_key_ciphertext: string;
  upstream_task_id: string;
  status: VideoTaskStatus;
  progress: Int;
  seconds: Int | null;
  size: string | null;
  error_message: string | null;
  created_at: Stamp;
  updated_at: Stamp;
  last_polled_at: Stamp | null;
  completed_at: Stamp | null;
}

export interface StoredResponsesTable {
  id: string;
  account_id: string;
  body: string;
  created_at: Stamp;
  expires_at: Stamp;
}

/** A gateway process's slice of an account's balance, counted in its held_nano (migration 0039, ADR 0048). */
export interface AccountEscrowsTable {
  account_id: string;
  holder: string;
  amount_nano: Int;
  expires_at: Stamp;
  /** 0 none; 1 asked to give back what it does not use; 2 gave it back since. */
  recall: ColumnType<number, number | undefined, number>;
}
