// Where the response cache keeps its entries (ADR 0044): Redis when REDIS_URL is set (shared by every
// process of the gateway), else this process's memory, bounded by bytes with the least recently used
// entries leaving first. Both hold opaque text under a key with a TTL. A backend failure is thrown;
// the cache (response-cache.ts) counts it and treats it as a miss, so Redis being down never fails a
// request.
import type { CacheSettings } from "../../config/cache-settings.js";

export interface CacheBackend {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlSeconds: number): Promise<void>;
  close(): Promise<void>;
  /** Entries the backend dropped to stay within its bound (the memory backend; Redis evicts on its own, uncounted). */
  readonly evictions: number;
}

interface MemoryEntry {
  value: string;
  bytes: number;
  expiresAt: number;
}

/** In-process entries: a Map in least-recently-used order (a hit moves its entry to the end). */
export class MemoryBackend implements CacheBackend {
  readonly #entries = new Map<string, MemoryEntry>();
  #bytes = 0;
  #evictions = 0;

  constructor(
    private readonly maxTotalBytes: number,
    private readonly now: () => number = Date.now,
  ) {}

  get evictions(): number {
    return this.#evictions;
  }

  /** The bytes the entries take (their text as UTF-8 and their keys). */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): Promise<string | null> {
    const entry = this.#entries.get(key);
    if (entry === undefined) return Promise.resolve(null);
    if (entry.expiresAt <= this.now()) {
      this.#drop(key, entry);
      return Promise.resolve(null);
    }
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return Promise.resolve(entry.value);
  }

  set(key: string, value: string, ttlSeconds: number): Promise<void> {
    const bytes = Buffer.byteLength(value) + Buffer.byteLength(key);
    const old = this.#entries.get(key);
    if (old !== undefined) this.#drop(key, old);
    if (bytes > this.maxTotalBytes) return Promise.resolve();
    while (this.#bytes + bytes > this.maxTotalBytes) {
      const oldest = this.#entries.entries().next();
      if (oldest.done === true) break;
      this.#drop(oldest.value[0], oldest.value[1]);
      this.#evictions++;
    }
    this.#entries.set(key, { value, bytes, expiresAt: this.now() + ttlSeconds * 1000 });
    this.#bytes += bytes;
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.#entries.clear();
    this.#bytes = 0;
    return Promise.resolve();
  }

  #drop(key: string, entry: MemoryEntry): void {
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }
}

/** The few commands of ioredis the backend uses. */
interface RedisClient {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, mode: "EX", seconds: number): Promise<unknown>;
  quit(): Promise<unknown>;
  disconnect(): void;
  on(event: "error", listener: (error: Error) => void): unknown;
  once(event: "ready" | "error", listener: () => void): unknown;
}

/**
 * Entries in Redis, each with Redis's own TTL. Commands are never queued while disconnected and
 * time out after cache.redis_timeout_ms: an unreachable Redis costs a request that long at most.
 */
export class RedisBackend implements CacheBackend {
  readonly evictions = 0;

  private constructor(private readonly client: RedisClient) {}

  /** ioredis is loaded only when REDIS_URL is set (a CommonJS package: its default export). */
  static async connect(settings: Pick<CacheSettings, "redisUrl" | "redisTimeoutMs">, onError: (error: Error) => void): Promise<RedisBackend> {
    const { Redis } = (await import("ioredis")).default;
    const client = new Redis(settings.redisUrl ?? "redis://127.0.0.1:6379", {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: settings.redisTimeoutMs,
      connectTimeout: Math.max(settings.redisTimeoutMs, 1_000),
      retryStrategy: (attempt: number) => Math.min(attempt * 200, 2_000),
      lazyConnect: false,
    });
    client.on("error", onError);
    // Started ready when Redis answers within the connect timeout; otherwise started anyway (misses until it does).
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(settings.redisTimeoutMs, 1_000));
      timer.unref();
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      client.once("ready", done);
      client.once("error", done);
    });
    return new RedisBackend(client);
  }

  get(key: string): Promise<string | null> {
    return this.client.get(key);
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    await this.client.set(key, value, "EX", ttlSeconds);
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
