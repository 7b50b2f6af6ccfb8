// Row types of the alerts tables (migration 0033; ADR 0040).
import type { Int, Stamp } from "./column-types.js";

export type AlertFormat = "json" | "slack";
export type AlertDeliveryStatus = "pending" | "delivered" | "failed";

export interface AlertSubscriptionsTable {
  id: string;
  /** null: the operator's (every event); else the workspace whose events it receives. */
  workspace_id: string | null;
  url: string;
  format: AlertFormat;
  /** JSON array of event types. */
  events: string;
  secret_ciphertext: string;
  description: string | null;
  enabled: Int | number;
  created_by: string | null;
  created_at: Stamp;
  updated_at: Stamp;
}

export interface AlertEventsTable {
  id: string;
  dedup_key: string;
  type: string;
  workspace_id: string | null;
  account_id: string | null;
  /** The event's JSON body (without the envelope's id, type and time). */
  payload: string;
  created_at: Stamp;
}

export interface AlertDeliveriesTable {
  id: string;
  event_id: string;
  subscription_id: string;
  status: AlertDeliveryStatus;
  attempts: Int | number;
  next_attempt_at: Stamp;
  lease_until: Stamp;
  last_status: Int | number | null;
  last_error: string | null;
  created_at: Stamp;
  updated_at: Stamp;
  delivered_at: Stamp | null;
}

export interface ScheduledRunsTable {
  name: string;
  last_started_at: Stamp;
  last_finished_at: Stamp;
  last_ok: Int | number | null;
  last_detail: string | null;
}
