// Asynchronous video tasks, durable across restarts and shared by every gateway process on one
// database. Every state change is a conditional UPDATE that only moves a task that is still open
// (queued or in_progress), so two processes racing on one task cannot both finish it; the poll
// slot is claimed the same way, which is what rate-limits upstream polls across processes.
import type { Kysely, Selectable } from "kysely";
import type { Database, VideoTasksTable, VideoTaskStatus } from "./tables.js";

export type VideoTaskRow = Selectable<VideoTasksTable>;

export const OPEN_STATUSES: readonly VideoTaskStatus[] = ["queued", "in_progress"];

export interface NewVideoTask {
  id: string;
  accountId: string;
  keyId: string;
  requestId: string;
  model: string;
  provider: string;
  upstreamKeyCiphertext: string;
  upstreamTaskId: string;
  status: "queued" | "in_progress";
  progress: number;
  seconds: number;
  size: string | null;
  now: number;
}

/** What the hold placed at submit still reserves (null once settled, released or swept). */
export interface HeldReservation {
  id: string;
  amount: bigint;
  tokens: bigint;
  /** The budget scopes it holds in (holds.budgets, migration 0029). */
  budgets: string[];
  /** The request's tags (holds.tags, migration 0030). */
  tags: string[];
}

export class VideoTasksStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(task: NewVideoTask): Promise<VideoTaskRow> {
    const row: VideoTaskRow = {
      id: task.id,
      account_id: task.accountId,
      key_id: task.keyId,
      request_id: task.requestId,
      model: task.model,
      provider: task.provider,
      upstream_key_ciphertext: task.upstreamKeyCiphertext,
      upstream_task_id: task.upstreamTaskId,
      status: task.status,
      progress: BigInt(clampProgress(task.progress)),
      seconds: BigInt(task.seconds),
      size: task.size,
      error_message: null,
      created_at: BigInt(task.now),
      updated_at: BigInt(task.now),
      // The submit itself was an upstream call: the first status poll waits one interval.
      last_polled_at: BigInt(task.now),
      completed_at: null,
    };
    await this.db.insertInto("video_tasks").values(row).execute();
    return row;
  }

  get(id: string): Promise<VideoTaskRow | undefined> {
    return this.db.selectFrom("video_tasks").selectAll().where("id", "=", id).executeTakeFirst();
  }

  /**
   * Claims the right to poll the upstream now: true for exactly one caller per interval, in any
   * process. The claim is the timestamp itself, so a crashed poller blocks nobody for long.
   */
  async claimPoll(id: string, now: number, minIntervalMs: number): Promise<boolean> {
    const result = await this.db
      .updateTable("video_tasks")
      .set({ last_polled_at: BigInt(now) })
      .where("id", "=", id)
      .where("status", "in", OPEN_STATUSES)
      .where((eb) => eb.or([eb("last_polled_at", "is", null), eb("last_polled_at", "<=", BigInt(now - minIntervalMs))]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async updateProgress(id: string, status: "queued" | "in_progress", progress: number, now: number): Promise<void> {
    await this.db
      .updateTable("video_tasks")
      .set({ status, progress: BigInt(clampProgress(progress)), updated_at: BigInt(now) })
      .where("id", "=", id)
      .where("status", "in", OPEN_STATUSES)
      .execute();
  }

  /**
   * Open (or expired) -> completed with the seconds actually produced; false when another caller
   * finished it first. Called after the charge is settled, so a charged task never looks unfinished,
   * not even one that expired while its last poll was under way.
   */
  async complete(id: string, seconds: number, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable("video_tasks")
      .set({ status: "completed", progress: 100n, seconds: BigInt(seconds), updated_at: BigInt(now), completed_at: BigInt(now), error_message: null })
      .where("id", "=", id)
      .where("status", "in", [...OPEN_STATUSES, "expired"])
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Open -> failed or expired, with a message already scrubbed by the caller. */
  async finishUnsuccessfully(id: string, status: "failed" | "expired", message: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable("video_tasks")
      .set({ status, error_message: message.slice(0, 2_000), updated_at: BigInt(now) })
      .where("id", "=", id)
      .where("status", "in", OPEN_STATUSES)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Open tasks nobody polled for staleMs (or older than expireBefore), oldest poll first: the background refresher's work. */
  async listStale(now: number, staleMs: number, limit: number): Promise<VideoTaskRow[]> {
    return this.db
      .selectFrom("video_tasks")
      .selectAll()
      .where("status", "in", OPEN_STATUSES)
      .where((eb) => eb.or([eb("last_polled_at", "is", null), eb("last_polled_at", "<=", BigInt(now - staleMs))]))
      .orderBy("last_polled_at")
      .limit(limit)
      .execute();
  }

  /** The reservation of the hold placed for a task's request; holds.request_id is unique. */
  async heldFor(requestId: string): Promise<HeldReservation | null> {
    const row = await this.db.selectFrom("holds").select(["id", "amount_nano", "tokens", "budgets", "tags"]).where("request_id", "=", requestId).executeTakeFirst();
    if (!row) return null;
    const list = (text: string | null): string[] => {
      const value: unknown = text === null ? [] : JSON.parse(text);
      return Array.isArray(value) ? value.map(String) : [];
    };
    return { id: row.id, amount: row.amount_nano, tokens: row.tokens, budgets: list(row.budgets), tags: list(row.tags) };
  }
}

function clampProgress(value: number): number {
  if (!Number.isFinite(value)) return 0;
  return Math.min(100, Math.max(0, Math.round(value)));
}
