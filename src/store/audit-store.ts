// The audit log (migration 0014): every administrative change, from the admin API, the dashboard's
// administrator actions and the CLI, with who made it, what changed (the changed fields before and
// after, as JSON), when and from where. Rows are appended by Store.audited in the transaction of the
// change itself; the database refuses updates and deletes.
import type { AlertEventInput } from "../core/alert-events.js";
import { recordAlertEvent } from "./alerts-store.js";
import type { Kysely, Selectable, Transaction } from "kysely";
import { newId, nowMs } from "../core/ids.js";
import type { AuditActorType, AuditLogTable, Database } from "./tables.js";

/** Who makes a change: an admin token, a signed-in dashboard account, or the CLI. */
export interface AuditActor {
  type: AuditActorType;
  /** The admin token's id or the dashboard account's id; null for the CLI. */
  id: string | null;
  /** The admin token's name, the account's email, or the operating-system user running the CLI. */
  name: string | null;
  clientAddress: string | null;
  requestId: string | null;
}

export type AuditFields = Record<string, unknown>;

export interface AuditChange {
  /** e.g. account.update, account.credit, key.create (docs/operations.md lists them). */
  action: string;
  targetType: string;
  targetId: string;
  /** The fields before the change (null: the target did not exist). */
  before: AuditFields | null;
  /** The fields after the change (null: the target no longer exists). */
  after: AuditFields | null;
}

export interface AuditEntry {
  id: string;
  createdAt: number;
  actor: { type: AuditActorType; id: string | null; name: string | null };
  action: string;
  targetType: string;
  targetId: string;
  before: AuditFields | null;
  after: AuditFields | null;
  clientAddress: string | null;
  requestId: string | null;
}

export interface AuditFilters {
  targetId?: string;
  targetType?: string;
  actorId?: string;
  actorType?: AuditActorType;
  action?: string;
  /** Rows with a smaller id than this (paging from newest to oldest). */
  beforeId?: bigint;
  limit: number;
}

/** Keeps only the fields whose values differ, on both sides: the audit row records what changed. */
export function changedFields(before: AuditFields, after: AuditFields): { before: AuditFields; after: AuditFields } {
  const b: AuditFields = {};
  const a: AuditFields = {};
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (JSON.stringify(toJsonValue(before[name])) === JSON.stringify(toJsonValue(after[name]))) continue;
    b[name] = before[name] ?? null;
    a[name] = after[name] ?? null;
  }
  return { before: b, after: a };
}

function toJsonValue(value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}

function encode(fields: AuditFields | null): string | null {
  return fields === null ? null : JSON.stringify(fields, (_name, value: unknown) => toJsonValue(value));
}

function decode(text: string | null): AuditFields | null {
  return text === null ? null : (JSON.parse(text) as AuditFields);
}

/** Appends one audit row inside the caller's transaction. */
export async function appendAudit(trx: Transaction<Database>, actor: AuditActor, change: AuditChange): Promise<void> {
  // A change an alert reports (a provider key disabled, the config or catalog changed) commits with its event.
  const alert = alertOfChange(actor, change);
  if (alert) await recordAlertEvent(trx, alert, Date.now());
  await trx
    .insertInto("audit_log")
    .values({
      created_at: nowMs(),
      actor_type: actor.type,
      actor_id: actor.id,
      actor_name: actor.name,
      action: change.action,
      target_type: change.targetType,
      target_id: change.targetId,
      before: encode(change.before),
      after: encode(change.after),
      client_address: actor.clientAddress,
      request_id: actor.requestId,
    })
    .execute();
}

export function toAuditEntry(row: Selectable<AuditLogTable>): AuditEntry {
  return {
    id: row.id.toString(),
    createdAt: Number(row.created_at),
    actor: { type: row.actor_type, id: row.actor_id, name: row.actor_name },
    action: row.action,
    targetType: row.target_type,
    targetId: row.target_id,
    before: decode(row.before),
    after: decode(row.after),
    clientAddress: row.client_address,
    requestId: row.request_id,
  };
}

export class AuditStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Newest first; `beforeId` continues a page. */
  async list(filters: AuditFilters): Promise<AuditEntry[]> {
    let query = this.db.selectFrom("audit_log").selectAll();
    if (filters.targetId !== undefined) query = query.where("target_id", "=", filters.targetId);
    if (filters.targetType !== undefined) query = query.where("target_type", "=", filters.targetType);
    if (filters.actorId !== undefined) query = query.where("actor_id", "=", filters.actorId);
    if (filters.actorType !== undefined) query = query.where("actor_type", "=", filters.actorType);
    if (filters.action !== undefined) query = query.where("action", "=", filters.action);
    if (filters.beforeId !== undefined) query = query.where("id", "<", filters.beforeId);
    const rows = await query.orderBy("id", "desc").limit(filters.limit).execute();
    return rows.map(toAuditEntry);
  }
}

/** Audit actions that change what is served but are not reported as config.changed. */
const NOT_CONFIG_CHANGES = new Set(["catalog.provider_key.test", "catalog.provider_key.auto_disable", "catalog.provider_key.disable"]);

/** The alert an audited change raises, if any (ADR 0040): names and ids only, as in the audit row. */
export function alertOfChange(actor: AuditActor, change: AuditChange): AlertEventInput | null {
  const dedupKey = `audit:${newId("a")}`;
  const by = actor.name ?? actor.id ?? actor.type;
  if (change.action === "catalog.provider_key.auto_disable" || change.action === "catalog.provider_key.disable") {
    const after = (change.after ?? {}) as Record<string, unknown>;
    const reason = typeof after.reason === "string" ? after.reason : `disabled by ${by}`;
    return { type: "provider_key.disabled", dedupKey, data: { key: change.targetId, provider: after.provider ?? null, reason, actor: by } };
  }
  if (change.action === "config.reload" || (change.action.startsWith("catalog.") && !NOT_CONFIG_CHANGES.has(change.action))) {
    const after = (change.after ?? {}) as Record<string, unknown>;
    const before = (change.before ?? {}) as Record<string, unknown>;
    return {
      type: "config.changed",
      dedupKey,
      data: {
        action: change.action,
        target_type: change.targetType,
        target_id: change.targetId,
        version: after.version ?? null,
        previous_version: before.version ?? null,
        actor: by,
      },
    };
  }
  return null;
}
