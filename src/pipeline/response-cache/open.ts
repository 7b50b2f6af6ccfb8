// Builds the response cache at start: Redis when REDIS_URL is set, else the in-process backend.
import type { Logger } from "pino";
import type { GatewayConfig } from "../../config/load.js";
import type { Store } from "../../store/index.js";
import { MemoryBackend, RedisBackend } from "./backends.js";
import { ResponseCache } from "./response-cache.js";

/** A failing Redis is logged at most this often (every request would otherwise log it). */
const ERROR_LOG_INTERVAL_MS = 10_000;

export async function openResponseCache(config: GatewayConfig, store: Store, logger: Logger): Promise<ResponseCache> {
  const settings = config.cache;
  let loggedAt = -Infinity;
  const onError = (error: unknown): void => {
    const now = Date.now();
    if (now - loggedAt < ERROR_LOG_INTERVAL_MS) return;
    loggedAt = now;
    logger.warn({ err: error instanceof Error ? error.message : String(error) }, "response cache unavailable; requests are served as misses");
  };
  const backend = settings.redisUrl === null ? new MemoryBackend(settings.maxTotalBytes) : await RedisBackend.connect(settings, onError);
  return new ResponseCache(backend, store.cacheSettings, onError);
}
