// The life of a video task after submit: refreshing its state from the upstream (at most once per
// poll interval, in any process), and the money that follows a final state. Used by client polls,
// the content route, and a background refresher that finishes tasks no client polls any more
// (the upstream bills the gateway for a finished video whether or not the client comes back).
//
// States (the row's status):  queued -> in_progress -> completed | failed | expired
//   completed: settled once (ledger row, idempotent by the task's request id), then marked;
//   failed:    the upstream says so (or no longer knows the task): hold released, nothing charged;
//   expired:   open longer than the task lifetime: hold released, nothing charged.
// A completion the upstream reports for an expired task still wins (it is charged and shown as
// completed), so a charge is never recorded for a task that looks unfinished.
import { modelAtPriceFactor } from "../../core/price-factor.js";
import type { Logger } from "pino";
import type { Hold } from "../../billing/types.js";
import type { ModelConfig, ProviderConfig } from "../../core/catalog.js";
import { scrubberForResponse } from "../../pipeline/response-scrubber.js";
import { createScrubber, REDACTED, type Scrubber } from "../../pipeline/scrub.js";
import type { ConfigSnapshot, LiveConfig } from "../../http/route-context.js";
import type { PipelineServices } from "../../pipeline/services.js";
import { OPEN_STATUSES, type VideoTaskRow } from "../../store/video-tasks-store.js";
import { sendToProvider } from "../../upstreams/upstream-client.js";
import { readBounded } from "../../upstreams/upstream-client.js";
import { videoAdapterFor, type UpstreamVideoState } from "./video-adapter.js";
import { MAX_VIDEO_SECONDS } from "./video-request.js";

const POLL_TIMEOUT_MS = 30_000;
const MAX_POLL_BYTES = 4 * 1024 * 1024;
const REFRESH_BATCH = 50;

export class VideoTaskService {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;

  /**
   * A request passes its own config snapshot (decision 0021); background work (the refresher) takes
   * the current one. A task is priced by the config it settles under, as after a restart.
   */
  constructor(
    private readonly live: LiveConfig,
    private readonly logger: Logger,
  ) {}

  /** The current snapshot's services (the store, billing and caches are the same in every snapshot). */
  get services(): PipelineServices {
    return this.live.current.pipeline;
  }

  get store() {
    return this.services.store.videoTasks;
  }

  /** The task as the client should see it now: cached, or refreshed from the upstream when due. */
  async refresh(row: VideoTaskRow, now = Date.now(), snapshot: ConfigSnapshot = this.live.current): Promise<VideoTaskRow> {
    if (!OPEN_STATUSES.includes(row.status)) return row;
    const { config, media } = snapshot;
    const model = config.models.get(row.model);
    const provider = config.providers.get(row.provider);
    if (!model || !provider) return row; // removed from the config: nothing can be polled or priced
    const interval = media.settings.videoPollIntervalMs;
    if (row.last_polled_at !== null && now - Number(row.last_polled_at) < interval) return row;
    if (!(await this.store.claimPoll(row.id, now, interval))) return (await this.store.get(row.id)) ?? row;

    if (now - Number(row.created_at) >= media.settings.videoTaskTtlMs) {
      await this.#finishUnsuccessfully(row, model, "expired", "The video task did not finish within its lifetime.", now);
      return (await this.store.get(row.id)) ?? row;
    }
    try {
      await this.apply(row, await this.#poll(row, provider, snapshot), now, snapshot);
    } catch (error) {
      // The cached state stands; the next poll after the interval tries again.
      this.logger.warn({ video_task: row.id, err: error }, "video task poll failed");
    }
    return (await this.store.get(row.id)) ?? row;
  }

  /** A scrubber for upstream text about this task: the account's, plus the task's own upstream key. */
  async scrubberFor(row: VideoTaskRow, provider: ProviderConfig, key: string, snapshot: ConfigSnapshot = this.live.current): Promise<Scrubber> {
    const { pipeline } = snapshot;
    const base = (await pipeline.upstreamKeys.keysFor(row.account_id, provider)).scrubber ?? pipeline.scrubber;
    const own = createScrubber({ secrets: [key], hosts: [provider.baseUrl] });
    return {
      scrubText: (text) => own.scrubText(base.scrubText(text)).split(key).join(REDACTED),
      scrubJson: (value) => own.scrubJson(base.scrubJson(value)),
      isCleanJsonText: (text) => !text.includes(key) && base.isCleanJsonText(text) && own.isCleanJsonText(text),
    };
  }

  upstreamKey(row: VideoTaskRow): string {
    return this.services.store.box.decrypt(row.upstream_key_ciphertext);
  }

  async #poll(row: VideoTaskRow, provider: ProviderConfig, snapshot: ConfigSnapshot): Promise<UpstreamVideoState> {
    const adapter = videoAdapterFor(provider);
    const key = this.upstreamKey(row);
    const response = await sendToProvider(provider, adapter.pollRequest(provider, row.upstream_task_id, key), AbortSignal.timeout(POLL_TIMEOUT_MS));
    if (response.status === 404 || response.status === 410) {
      await response.body.dump().catch(() => undefined);
      return { status: "failed", progress: null, seconds: null, error: "The upstream no longer knows this video task." };
    }
    if (response.status < 200 || response.status >= 300) {
      await response.body.dump().catch(() => undefined);
      throw new Error(`upstream poll answered ${response.status}`);
    }
    const body = await readBounded(response.body, MAX_POLL_BYTES);
    if (!body) throw new Error("upstream poll answer too large");
    const state = adapter.parsePolled(JSON.parse(body.toString("utf8")));
    // apply() scrubs the message again when it records it, but only this answer knows its header ids.
    if (state.error) state.error = scrubberForResponse(await this.scrubberFor(row, provider, key, snapshot), response.headers).scrubText(state.error);
    return state;
  }

  /** Records what the upstream reported about a task, with the money that follows a final state. */
  async apply(row: VideoTaskRow, state: UpstreamVideoState, now: number, snapshot: ConfigSnapshot = this.live.current): Promise<void> {
    const { config, media } = snapshot;
    const model = config.models.get(row.model);
    const provider = config.providers.get(row.provider);
    if (!model || !provider) return;
    switch (state.status) {
      case "queued":
      case "in_progress":
        await this.store.updateProgress(row.id, state.status, state.progress ?? Number(row.progress), now);
        return;
      case "completed": {
        const seconds = Math.ceil(billedSeconds(state.seconds) ?? Number(row.seconds ?? media.settings.defaultVideoSeconds));
        await this.#settle(row, model, seconds, config.tierPriceFactors);
        await this.store.complete(row.id, seconds, now);
        return;
      }
      case "failed": {
        const key = this.upstreamKey(row);
        let message = "The video generation failed.";
        try {
          message = (await this.scrubberFor(row, provider, key, snapshot)).scrubText(state.error ?? message);
        } catch {
          // contract item 9: a generic message replaces what could not be scrubbed.
        }
        await this.#finishUnsuccessfully(row, model, "failed", message, now);
        return;
      }
    }
  }

  /** Settles the actual seconds against the task's hold; a replay (another process, a retry) charges nothing more. */
  async #settle(row: VideoTaskRow, model: ModelConfig, seconds: number, tierPriceFactors: ReadonlyMap<string, number>): Promise<void> {
    // At the prices of the account's tier now, as a request settled at once is (price-factor.ts).
    const account = await this.services.store.accounts.get(row.account_id);
    const factor = account === null ? undefined : tierPriceFactors.get(account.tier);
    const charge = await this.services.billing.settle(
      await this.#hold(row, modelAtPriceFactor(model, factor)),
      { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0, videoSeconds: seconds, estimated: false },
      row.provider,
    );
    this.logger.info({ video_task: row.id, request_id: row.request_id, seconds, cost_nano: String(charge.cost), recorded: charge.recorded }, "video task settled");
  }

  async #finishUnsuccessfully(row: VideoTaskRow, model: ModelConfig, status: "failed" | "expired", message: string, now: number): Promise<void> {
    // Released first: a crash in between leaves an open task whose next refresh releases nothing more.
    await this.services.billing.release(await this.#hold(row, model));
    await this.store.finishUnsuccessfully(row.id, status, message, now);
  }

  /**
   * The hold placed at submit, rebuilt from the database (the process that placed it may be gone).
   * When the sweeper already released it, the id matches no row and settlement charges in full.
   */
  async #hold(row: VideoTaskRow, model: ModelConfig): Promise<Hold> {
    const held = await this.store.heldFor(row.request_id);
    return {
      id: held?.id ?? `hold_gone_${row.id}`,
      requestId: row.request_id,
      accountId: row.account_id,
      keyId: row.key_id,
      amount: held?.amount ?? 0n,
      tokens: Number(held?.tokens ?? 0n),
      model,
      route: "videos",
      // A hold the sweeper released takes its scopes with it: the task then charges the account and key only (docs/billing.md).
      ...(held !== null && held.budgets.length > 0 && { budgets: held.budgets }),
      ...(held !== null && held.tags.length > 0 && { tags: held.tags }),
    };
  }

  /** Refreshes open tasks nobody polled for a while, so they settle or expire without a client. */
  startRefresher(): void {
    // Read once: a reload changing media.video_refresh_interval_ms applies after a restart (docs/operations.md).
    const every = this.live.current.media.settings.videoRefreshIntervalMs;
    if (this.#timer || every <= 0) return;
    this.#timer = setInterval(() => {
      if (this.#running) return;
      this.#running = this.refreshStale()
        .catch((error: unknown) => this.logger.warn({ err: error }, "video task refresh failed"))
        .finally(() => (this.#running = undefined));
    }, every);
    this.#timer.unref();
  }

  async refreshStale(now = Date.now()): Promise<number> {
    const snapshot = this.live.current;
    const { settings } = snapshot.media;
    const stale = await this.store.listStale(now, Math.max(settings.videoRefreshIntervalMs, settings.videoPollIntervalMs), REFRESH_BATCH);
    for (const row of stale) await this.refresh(row, now, snapshot);
    return stale.length;
  }

  async stopRefresher(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }
}

/**
 * The seconds the upstream reports for a finished video, when they are plausible: no task may ask for
 * more than MAX_VIDEO_SECONDS, so a larger figure (1e30) is a buggy or hostile upstream and the
 * seconds the task asked for (and held) are billed instead. (Negative and non-numbers are already
 * null: numberOrNull.)
 */
function billedSeconds(reported: number | null): number | null {
  return reported !== null && reported >= 0 && reported <= MAX_VIDEO_SECONDS ? reported : null;
}
