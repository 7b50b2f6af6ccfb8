// The alerts outbox and its subscriptions (migration 0033; ADR 0040). An event is recorded once per
// dedup key (INSERT ... ON CONFLICT DO NOTHING), with a delivery row per subscription that wants it, in
// the caller's transaction when it passes one (a credit: the ledger row and its event commit
// together). Deliveries are claimed with a lease: FOR UPDATE SKIP LOCKED on PostgreSQL, one atomic
// UPDATE on SQLite's single writer; a claim that was not recorded (a process died) is due again when
// its lease ends.
import { sql, type Kysely } from "kysely";
import type { AlertEventInput } from "../core/alert-events.js";
import { newId, randomText } from "../core/ids.js";
import { formatUsd } from "../core/money.js";
import type { SecretBox } from "../core/secret-box.js";
import type { Dialect } from "./dialect.js";
import type { AlertDeliveryStatus, AlertFormat, AlertSubscriptionsTable } from "./tables-alerts.js";
import type { Database } from "./tables.js";

export interface AlertSubscription {
  id: string;
  workspaceId: string | null;
  url: string;
  format: AlertFormat;
  events: string[];
  description: string | null;
  enabled: boolean;
  createdBy: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface NewAlertSubscription {
  workspaceId: string | null;
  url: string;
  format: AlertFormat;
  events: string[];
  description: string | null;
  createdBy: string | null;
}

export type AlertSubscriptionChanges = Partial<Pick<AlertSubscription, "url" | "format" | "events" | "description" | "enabled">>;

export interface AlertDelivery {
  id: string;
  eventId: string;
  eventType: string;
  subscriptionId: string;
  status: AlertDeliveryStatus;
  attempts: number;
  nextAttemptAt: number;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  deliveredAt: number | null;
}

/** A claimed delivery with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  attempts: number;
  leaseUntil: number;
  event: { id: string; type: string; payload: string; createdAt: number };
  subscription: { id: string; url: string; format: AlertFormat; secret: string };
}

/** The secret's length in random bytes (hex-encoded with a prefix when shown). */
const SECRET_BYTES = 24;

/** Records an event once per dedup key and a pending delivery per subscription that wants it; its id, or null when it existed. */
export async function recordAlertEvent(db: Kysely<Database>, event: AlertEventInput, now: number, only?: string): Promise<string | null> {
  const id = newId("evt");
  const inserted = await db
    .insertInto("alert_events")
    .values({
      id,
      dedup_key: event.dedupKey,
      type: event.type,
      workspace_id: event.workspaceId ?? null,
      account_id: event.accountId ?? null,
      payload: JSON.stringify(event.data),
      created_at: BigInt(now),
    })
    .onConflict((oc) => oc.column("dedup_key").doNothing())
    .returning("id")
    .executeTakeFirst();
  if (!inserted) return null;
  let query = db.selectFrom("alert_subscriptions").select(["id", "events", "workspace_id"]).where("enabled", "=", 1);
  query = only !== undefined ? query.where("id", "=", only) : query.where((eb) => eb.or([eb("workspace_id", "is", null), eb("workspace_id", "=", event.workspaceId ?? "")]));
  const subscriptions = await query.execute();
  const wanting = subscriptions.filter((s) => only !== undefined || (JSON.parse(s.events) as string[]).includes(event.type));
  if (wanting.length > 0) {
    await db
      .insertInto("alert_deliveries")
      .values(
        wanting.map((s) => ({
          id: newId("dlv"),
          event_id: id,
          subscription_id: s.id,
          status: "pending" as const,
          attempts: 0,
          next_attempt_at: BigInt(now),
          lease_until: 0n,
          created_at: BigInt(now),
          updated_at: BigInt(now),
        })),
      )
      .execute();
  }
  return id;
}

/** The credit.added event of a credit, in the credit's transaction (one event per credit). */
export function recordCreditAlert(db: Kysely<Database>, credit: { accountId: string; amount: bigint; balance: bigint; note: string | null }, now: number): Promise<string | null> {
  const data = { account_id: credit.accountId, amount_usd: formatUsd(credit.amount), balance_usd: formatUsd(credit.balance), reason: credit.note };
  return recordAlertEvent(db, { type: "credit.added", dedupKey: `credit:${newId("c")}`, accountId: credit.accountId, data }, now);
}

export class AlertsStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly box: SecretBox,
    private readonly dialect: Dialect,
  ) {}

  record(event: AlertEventInput, now = Date.now()): Promise<string | null> {
    return recordAlertEvent(this.db, event, now);
  }

  /** Creates a subscription; its signing secret is returned here only. */
  async create(input: NewAlertSubscription, now = Date.now()): Promise<{ subscription: AlertSubscription; secret: string }> {
    const secret = `whsec_${randomText(SECRET_BYTES, "hex")}`;
    const row = await this.db
      .insertInto("alert_subscriptions")
      .values({
        id: newId("sub"),
        workspace_id: input.workspaceId,
        url: input.url,
        format: input.format,
        events: JSON.stringify(input.events),
        secret_ciphertext: this.box.encrypt(secret),
        description: input.description,
        enabled: 1,
        created_by: input.createdBy,
        created_at: BigInt(now),
        updated_at: BigInt(now),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { subscription: toSubscription(row), secret };
  }

  /** workspaceId: undefined every subscription, null the operator's, else that workspace's. */
  async list(workspaceId?: string | null): Promise<AlertSubscription[]> {
    let query = this.db.selectFrom("alert_subscriptions").selectAll().orderBy("created_at").orderBy("id");
    if (workspaceId === null) query = query.where("workspace_id", "is", null);
    else if (workspaceId !== undefined) query = query.where("workspace_id", "=", workspaceId);
    return (await query.limit(1000).execute()).map(toSubscription);
  }

  async get(id: string): Promise<AlertSubscription | null> {
    const row = await this.db.selectFrom("alert_subscriptions").selectAll().where("id", "=", id).executeTakeFirst();
    return row ? toSubscription(row) : null;
  }

  async update(id: string, changes: AlertSubscriptionChanges, now = Date.now()): Promise<AlertSubscription | null> {
    const row = await this.db
      .updateTable("alert_subscriptions")
      .set({
        ...(changes.url !== undefined && { url: changes.url }),
        ...(changes.format !== undefined && { format: changes.format }),
        ...(changes.events !== undefined && { events: JSON.stringify(changes.events) }),
        ...(changes.description !== undefined && { description: changes.description }),
        ...(changes.enabled !== undefined && { enabled: changes.enabled ? 1 : 0 }),
        updated_at: BigInt(now),
      })
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirst();
    return row ? toSubscription(row) : null;
  }

  /** Deletes a subscription and its deliveries; false when there was none. */
  async delete(id: string): Promise<boolean> {
    await this.db.deleteFrom("alert_deliveries").where("subscription_id", "=", id).execute();
    const result = await this.db.deleteFrom("alert_subscriptions").where("id", "=", id).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /** Whether any subscription is enabled: without one, nothing looks for events on the request path's aftermath. */
  async anyEnabled(): Promise<boolean> {
    return (await this.db.selectFrom("alert_subscriptions").select("id").where("enabled", "=", 1).limit(1).executeTakeFirst()) !== undefined;
  }

  /** A subscription's deliveries, newest first. */
  async deliveries(subscriptionId: string, limit = 100): Promise<AlertDelivery[]> {
    const rows = await this.db
      .selectFrom("alert_deliveries as d")
      .innerJoin("alert_events as e", "e.id", "d.event_id")
      .select([
        "d.id",
        "d.event_id",
        "e.type",
        "d.subscription_id",
        "d.status",
        "d.attempts",
        "d.next_attempt_at",
        "d.last_status",
        "d.last_error",
        "d.created_at",
        "d.delivered_at",
      ])
      .where("d.subscription_id", "=", subscriptionId)
      .orderBy("d.created_at", "desc")
      .orderBy("d.id", "desc")
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      id: r.id,
      eventId: r.event_id,
      eventType: r.type,
      subscriptionId: r.subscription_id,
      status: r.status,
      attempts: Number(r.attempts),
      nextAttemptAt: Number(r.next_attempt_at),
      lastStatus: r.last_status === null ? null : Number(r.last_status),
      lastError: r.last_error,
      createdAt: Number(r.created_at),
      deliveredAt: r.delivered_at === null ? null : Number(r.delivered_at),
    }));
  }

  /** Sends a test event to one subscription now. */
  sendTest(subscriptionId: string, now = Date.now()): Promise<string | null> {
    const data = { message: "A test event from the gateway: this endpoint receives its alerts.", subscription_id: subscriptionId };
    return recordAlertEvent(this.db, { type: "test", dedupKey: `test:${newId("t")}`, data }, now, subscriptionId);
  }

  /** Claims up to `limit` due deliveries until `leaseUntil`; a claimed row is due again when the lease ends unrecorded. */
  async claimDue(now: number, leaseUntil: number, limit: number): Promise<ClaimedDelivery[]> {
    const lockClause = this.dialect === "postgres" ? sql`for update skip locked` : sql``;
    const claimed = await sql<{ id: string }>`
      update alert_deliveries set lease_until = ${BigInt(leaseUntil)}, updated_at = ${BigInt(now)}
      where id in (
        select id from alert_deliveries
        where status = 'pending' and next_attempt_at <= ${BigInt(now)} and lease_until <= ${BigInt(now)}
        order by next_attempt_at limit ${limit} ${lockClause}
      )
      returning id`.execute(this.db);
    const ids = claimed.rows.map((r) => r.id);
    if (ids.length === 0) return [];
    const rows = await this.db
      .selectFrom("alert_deliveries as d")
      .innerJoin("alert_events as e", "e.id", "d.event_id")
      .innerJoin("alert_subscriptions as s", "s.id", "d.subscription_id")
      .select([
        "d.id",
        "d.attempts",
        "d.lease_until",
        "e.id as event_id",
        "e.type",
        "e.payload",
        "e.created_at",
        "s.id as subscription_id",
        "s.url",
        "s.format",
        "s.secret_ciphertext",
      ])
      .where("d.id", "in", ids)
      .execute();
    return rows.map((r) => ({
      id: r.id,
      attempts: Number(r.attempts),
      leaseUntil: Number(r.lease_until),
      event: { id: r.event_id, type: r.type, payload: r.payload, createdAt: Number(r.created_at) },
      subscription: { id: r.subscription_id, url: r.url, format: r.format, secret: this.box.decrypt(r.secret_ciphertext) },
    }));
  }

  /** Records one attempt: delivered, or failed and due again at `retryAt` (null: given up). */
  async recordAttempt(id: string, outcome: { ok: boolean; status: number | null; error: string | null; retryAt: number | null }, now = Date.now()): Promise<void> {
    const status: AlertDeliveryStatus = outcome.ok ? "delivered" : outcome.retryAt === null ? "failed" : "pending";
    await this.db
      .updateTable("alert_deliveries")
      .set((eb) => ({
        status,
        attempts: eb("attempts", "+", 1),
        lease_until: 0n,
        next_attempt_at: BigInt(outcome.retryAt ?? now),
        last_status: outcome.status,
        last_error: outcome.error === null ? null : outcome.error.slice(0, 500),
        updated_at: BigInt(now),
        ...(outcome.ok && { delivered_at: BigInt(now) }),
      }))
      .where("id", "=", id)
      .where("status", "=", "pending")
      .execute();
  }
}

function toSubscription(row: AlertSubscriptionsTable): AlertSubscription {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    url: row.url,
    format: row.format,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    enabled: Number(row.enabled) === 1,
    createdBy: row.created_by,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
