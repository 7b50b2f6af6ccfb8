// The `cache` section and REDIS_URL as the response cache reads them (ADR 0044). The hit price is
// kept as basis points of the original cost (an exact integer: "0.1" is 1,000), so a hit's charge is
// integer arithmetic on nano-USD, never a float.
import type { ConfigFile } from "./schema.js";

export interface CacheSettings {
  /** REDIS_URL: entries in Redis, shared by every process; null: in this process's memory. */
  redisUrl: string | null;
  maxEntryBytes: number;
  /** The memory backend's bound on all entries (bytes). */
  maxTotalBytes: number;
  defaultTtlSeconds: number;
  minTtlSeconds: number;
  maxTtlSeconds: number;
  /** A hit's price in basis points (1/10,000) of the original cost: 0 is free, 10,000 the full cost. */
  hitPriceBasisPoints: number;
  allowGatewayScope: boolean;
  keyPrefix: string;
  redisTimeoutMs: number;
}

/** The basis points of a hit_price text: "free" is 0, "0.1" is 1,000, "1" is 10,000 (the schema bounds it). */
export function hitPriceBasisPoints(text: string): number {
  if (text === "free") return 0;
  const [whole, fraction = ""] = text.split(".");
  return Number(whole) * 10_000 + Number(fraction.padEnd(4, "0"));
}

export function cacheSettingsFrom(section: ConfigFile["cache"], redisUrl: string | undefined, fail: (field: string, message: string) => never): CacheSettings {
  if (section.min_ttl_seconds > section.max_ttl_seconds) fail("cache.min_ttl_seconds", "must not be above cache.max_ttl_seconds");
  if (section.default_ttl_seconds < section.min_ttl_seconds || section.default_ttl_seconds > section.max_ttl_seconds) {
    fail("cache.default_ttl_seconds", "must be within cache.min_ttl_seconds and cache.max_ttl_seconds");
  }
  if (section.max_entry_bytes > section.max_total_bytes) fail("cache.max_entry_bytes", "must not be above cache.max_total_bytes");
  const url = redisUrl?.trim() || null;
  if (url !== null && !/^rediss?:\/\//.test(url)) fail("REDIS_URL", "must start with redis:// or rediss://");
  return {
    redisUrl: url,
    maxEntryBytes: section.max_entry_bytes,
    maxTotalBytes: section.max_total_bytes,
    defaultTtlSeconds: section.default_ttl_seconds,
    minTtlSeconds: section.min_ttl_seconds,
    maxTtlSeconds: section.max_ttl_seconds,
    hitPriceBasisPoints: hitPriceBasisPoints(section.hit_price),
    allowGatewayScope: section.allow_gateway_scope,
    keyPrefix: section.key_prefix,
    redisTimeoutMs: section.redis_timeout_ms,
  };
}
