// Tunables of the media routes. Defaults suit production; tests lower the poll interval on a
// running gateway through ctx.media.settings (the values are read on every use, never cached).
import type { GatewayConfig } from "./load.js";

export interface MediaSettings {
  /** Minimum time between two upstream polls of one video task, in any process. */
  videoPollIntervalMs: number;
  /** How long the hold of a video task lives; also the task's lifetime before it expires. */
  videoTaskTtlMs: number;
  /** Seconds assumed (held, and asked of the upstream) when a video request names none. */
  defaultVideoSeconds: number;
  /** How often the background refresher looks for open tasks nobody polled; 0 disables it. */
  videoRefreshIntervalMs: number;
  /** Upper bound of a buffered upstream images response. */
  maxImageResponseBytes: number;
}

export const DEFAULT_MEDIA_SETTINGS: Readonly<MediaSettings> = {
  videoPollIntervalMs: 2_000,
  videoTaskTtlMs: 24 * 3_600_000,
  defaultVideoSeconds: 4,
  videoRefreshIntervalMs: 60_000,
  maxImageResponseBytes: 512 * 1024 * 1024,
};

export function mediaSettings(overrides: Partial<MediaSettings> = {}): MediaSettings {
  return { ...DEFAULT_MEDIA_SETTINGS, ...overrides };
}

/** The config file's `media` section (all optional) over the defaults. */
export function mediaSettingsFromConfig(media: GatewayConfig["media"]): MediaSettings {
  return mediaSettings({
    ...(media.video_poll_interval_ms !== undefined && { videoPollIntervalMs: media.video_poll_interval_ms }),
    ...(media.video_task_ttl_hours !== undefined && { videoTaskTtlMs: Math.round(media.video_task_ttl_hours * 3_600_000) }),
    ...(media.default_video_seconds !== undefined && { defaultVideoSeconds: media.default_video_seconds }),
    ...(media.video_refresh_interval_ms !== undefined && { videoRefreshIntervalMs: media.video_refresh_interval_ms }),
    ...(media.max_image_response_mb !== undefined && { maxImageResponseBytes: Math.round(media.max_image_response_mb * 1024 * 1024) }),
  });
}
