// The response cache as the request path uses it (ADR 0044): which requests use it (the key's or
// its workspace's setting, read from the database and kept a few seconds per key), entries read and
// written through a backend (backends.ts), and the counts the metrics report. Every backend failure
// is counted and becomes a miss (a read) or nothing stored (a write): the cache never fails a request.
// A database that cannot be reached for the settings does (decision 0053): the admission after the
// read needs the same database, and would only add a timeout of its own to the request's wait.
import type { CacheSettings } from "../../config/cache-settings.js";
import type { Usage } from "../../core/usage.js";
import type { ClientFrame } from "../../upstreams/plan.js";
import { cacheSubject, type CacheScope, type CacheSettingsStore, type CacheSetting } from "../../store/cache-settings-store.js";
import { isDatabaseUnreachable } from "../../store/db-errors.js";
import type { CacheBackend } from "./backends.js";

/** What a request's cache use is: how long its answer is kept and who may be served it. */
export interface CachePolicy {
  ttlSeconds: number;
  scope: CacheScope;
}

/** A stored answer: its stored form, the usage and the charge of the request that paid for it. */
export type CacheEntry = { usage: Usage; costNano: string; modelId: string } & (
  { kind: "buffered"; body: unknown } | { kind: "stream"; frames: ClientFrame[] } | { kind: "embeddings"; text: string; placeholder: string | null }
);

export type CacheEvent = "hits" | "misses" | "stores" | "errors" | "too_large";

/** How long a key's settings are kept in this process: a change applies within this on every process. */
export const SETTINGS_TTL_MS = 2_000;
const MAX_REMEMBERED_KEYS = 10_000;

export interface CacheSubjects {
  keyId: string;
  workspaceId: string | null;
}

export class ResponseCache {
  readonly #counts: Record<CacheEvent, number> = { hits: 0, misses: 0, stores: 0, errors: 0, too_large: 0 };
  readonly #settings = new Map<string, { setting: CacheSetting | null; until: number }>();
  /** The settings reads under way, by key id: concurrent requests of one key share one read. */
  readonly #reading = new Map<string, Promise<CacheSetting | null>>();
  /** Counts forget() calls: a read begun before one is not remembered after it. */
  #generation = 0;

  constructor(
    readonly backend: CacheBackend,
    private readonly store: CacheSettingsStore,
    private readonly onError: (error: unknown) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts since start, evictions included (metrics). */
  counts(): Record<CacheEvent | "evictions", number> {
    return { ...this.#counts, evictions: this.backend.evictions };
  }

  count(event: CacheEvent): void {
    this.#counts[event]++;
  }

  /** The request's policy: the key's setting, else its workspace's; null when neither uses the cache. */
  async policyFor(subjects: CacheSubjects, settings: CacheSettings): Promise<CachePolicy | null> {
    const setting = await this.#settingOf(subjects);
    if (setting === null) return null;
    const ttlSeconds = Math.min(Math.max(setting.ttlSeconds, settings.minTtlSeconds), settings.maxTtlSeconds);
    // A gateway scope the operator no longer allows narrows to the account.
    return { ttlSeconds, scope: setting.scope === "gateway" && settings.allowGatewayScope ? "gateway" : "account" };
  }

  /** Forgets what this process read of a key's settings (an admin change here applies at once). */
  forget(): void {
    this.#settings.clear();
    this.#reading.clear();
    this.#generation += 1;
  }

  async lookup(key: string): Promise<CacheEntry | null> {
    let text: string | null;
    try {
      text = await this.backend.get(key);
    } catch (error) {
      this.#failed(error);
      return null;
    }
    const entry = text === null ? null : parseEntry(text);
    this.count(entry === null ? "misses" : "hits");
    return entry;
  }

  /** Stores an answer unless it is larger than maxEntryBytes; never throws. */
  async put(key: string, entry: CacheEntry, ttlSeconds: number, maxEntryBytes: number): Promise<void> {
    try {
      const text = JSON.stringify(entry);
      if (Buffer.byteLength(text) > maxEntryBytes) {
        this.count("too_large");
        return;
      }
      await this.backend.set(key, text, ttlSeconds);
      this.count("stores");
    } catch (error) {
      this.#failed(error);
    }
  }

  close(): Promise<void> {
    return this.backend.close();
  }

  #failed(error: unknown): void {
    this.count("errors");
    this.onError(error);
  }

  async #settingOf(subjects: CacheSubjects): Promise<CacheSetting | null> {
    const remembered = this.#settings.get(subjects.keyId);
    if (remembered !== undefined && remembered.until > this.now()) return remembered.setting;
    let reading = this.#reading.get(subjects.keyId);
    if (reading === undefined) {
      const read: Promise<CacheSetting | null> = this.#readSetting(subjects).finally(() => {
        if (this.#reading.get(subjects.keyId) === read) this.#reading.delete(subjects.keyId);
      });
      this.#reading.set(subjects.keyId, (reading = read));
    }
    return reading;
  }

  async #readSetting(subjects: CacheSubjects): Promise<CacheSetting | null> {
    const now = this.now();
    const generation = this.#generation;
    const keySubject = cacheSubject("key", subjects.keyId);
    const workspaceSubject = subjects.workspaceId === null ? null : cacheSubject("workspace", subjects.workspaceId);
    let setting: CacheSetting | null;
    try {
      const rows = await this.store.read(workspaceSubject === null ? [keySubject] : [keySubject, workspaceSubject]);
      setting = rows.get(keySubject) ?? (workspaceSubject === null ? undefined : rows.get(workspaceSubject)) ?? null;
    } catch (error) {
      // The database is out of reach: the request fails now with its 503 (see the top).
      if (isDatabaseUnreachable(error)) throw error;
      // The settings could not be read: no cache for this request (it is served as without one).
      this.#failed(error);
      return null;
    }
    if (generation !== this.#generation) return setting;
    if (this.#settings.size >= MAX_REMEMBERED_KEYS) this.#settings.clear();
    this.#settings.set(subjects.keyId, { setting, until: now + SETTINGS_TTL_MS });
    return setting;
  }
}

/** An entry read back; null for text that is not one (another version's, or damaged): a miss. */
function parseEntry(text: string): CacheEntry | null {
  try {
    const value = JSON.parse(text) as Partial<CacheEntry> | null;
    if (value === null || typeof value !== "object" || typeof value.costNano !== "string" || !/^[0-9]{1,19}$/.test(value.costNano)) return null;
    if (value.kind !== "buffered" && value.kind !== "stream" && value.kind !== "embeddings") return null;
    return value as CacheEntry;
  } catch {
    return null;
  }
}

/** A hit's charge: the hit price's basis points of the original cost, rounded up to whole nano-USD. */
export function hitCost(originalCostNano: bigint, basisPoints: number): bigint {
  if (basisPoints <= 0) return 0n;
  const scaled = originalCostNano * BigInt(basisPoints);
  return (scaled + 9_999n) / 10_000n;
}
