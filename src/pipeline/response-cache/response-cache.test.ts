import { describe, expect, it } from "vitest";
import { hitPriceBasisPoints, type CacheSettings } from "../../config/cache-settings.js";
import type { CacheSetting, CacheSettingsStore } from "../../store/cache-settings-store.js";
import { MemoryBackend } from "./backends.js";
import { cacheKey } from "./cache-key.js";
import { hitCost, ResponseCache } from "./response-cache.js";

describe("the memory backend", () => {
  it("stays within its byte bound, the least recently used leaving first, and counts evictions", async () => {
    const backend = new MemoryBackend(300);
    const value = "x".repeat(90);
    await backend.set("a", value, 60);
    await backend.set("b", value, 60);
    await backend.set("c", value, 60);
    expect(await backend.get("a")).toBe(value); // a is now the most recently used
    await backend.set("d", value, 60);
    expect(backend.bytes).toBeLessThanOrEqual(300);
    expect(await backend.get("b")).toBeNull();
    expect(await backend.get("a")).toBe(value);
    expect(backend.evictions).toBe(1);
    // An entry larger than the whole bound is not stored, and evicts nothing.
    await backend.set("huge", "y".repeat(400), 60);
    expect(await backend.get("huge")).toBeNull();
    expect(backend.evictions).toBe(1);
  });

  it("forgets an entry at its TTL", async () => {
    let now = 1_000_000;
    const backend = new MemoryBackend(10_000, () => now);
    await backend.set("k", "v", 5);
    now += 4_999;
    expect(await backend.get("k")).toBe("v");
    now += 1;
    expect(await backend.get("k")).toBeNull();
    expect(backend.bytes).toBe(0);
  });
});

describe("the hit price", () => {
  it("is basis points of the original cost, rounded up to whole nano-USD", () => {
    expect(hitPriceBasisPoints("free")).toBe(0);
    expect(hitPriceBasisPoints("0.1")).toBe(1_000);
    expect(hitPriceBasisPoints("0.0001")).toBe(1);
    expect(hitPriceBasisPoints("1")).toBe(10_000);
    expect(hitCost(20_000n, 1_000)).toBe(2_000n);
    expect(hitCost(910n, 1_000)).toBe(91n);
    expect(hitCost(1n, 1)).toBe(1n);
    expect(hitCost(123_456_789n, 0)).toBe(0n);
    expect(hitCost(9_007_199_254_740_991n, 10_000)).toBe(9_007_199_254_740_991n);
  });
});

describe("the cache key", () => {
  const base = { route: "chat", modelId: "gpt-mock", delivery: "buffered" as const, accountId: "acct_1" };
  const body = { model: "alias", messages: [{ role: "user", content: "Hi" }], temperature: 0.5, max_tokens: 10 };

  it("ignores field order, stream and attribution fields, and the model text sent", () => {
    const key = cacheKey("p:", { ...base, body });
    expect(
      cacheKey("p:", {
        ...base,
        body: { max_tokens: 10, temperature: 0.5, messages: [{ content: "Hi", role: "user" }], model: "other", user: "u", metadata: { a: 1 }, stream: false },
      }),
    ).toBe(key);
    expect(key.startsWith("p:")).toBe(true);
  });

  it("changes with every field that changes the answer, the model, the format, the delivery and the account", () => {
    const key = cacheKey("p:", { ...base, body });
    const variants = [
      cacheKey("p:", { ...base, body: { ...body, temperature: 0.6 } }),
      cacheKey("p:", { ...base, body: { ...body, max_tokens: 11 } }),
      cacheKey("p:", { ...base, body: { ...body, seed: 1 } }),
      cacheKey("p:", { ...base, body: { ...body, tools: [] } }),
      cacheKey("p:", { ...base, body: { ...body, response_format: { type: "json_object" } } }),
      cacheKey("p:", { ...base, modelId: "gpt-other", body }),
      cacheKey("p:", { ...base, route: "messages", body }),
      cacheKey("p:", { ...base, delivery: "stream", body }),
      cacheKey("p:", { ...base, accountId: "acct_2", body }),
      cacheKey("p:", { ...base, accountId: null, body }),
    ];
    expect(new Set([key, ...variants]).size).toBe(variants.length + 1);
  });
});

describe("the settings read of a request's key", () => {
  const settings = { minTtlSeconds: 1, maxTtlSeconds: 3600, allowGatewayScope: false } as CacheSettings;
  const subjects = { keyId: "key_1", workspaceId: null };
  /** A settings store whose reads fail with `error` (or answer one setting), counting them. */
  const storeThat = (error: Error | null) => {
    const reads: string[][] = [];
    const store = {
      read: async (subjectsRead: readonly string[]) => {
        reads.push([...subjectsRead]);
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (error) throw error;
        return new Map<string, CacheSetting>([[subjectsRead[0]!, { ttlSeconds: 60, scope: "account", updatedAt: 1 }]]);
      },
    };
    return { store: store as unknown as CacheSettingsStore, reads };
  };

  it("is shared by the requests of one key that come while it is under way", async () => {
    const { store, reads } = storeThat(null);
    const cache = new ResponseCache(new MemoryBackend(1000), store, () => undefined);
    const policies = await Promise.all([cache.policyFor(subjects, settings), cache.policyFor(subjects, settings), cache.policyFor(subjects, settings)]);
    expect(policies).toEqual([0, 1, 2].map(() => ({ ttlSeconds: 60, scope: "account" })));
    expect(reads).toHaveLength(1);
  });

  it("fails the request when the database is out of reach, and serves it without the cache on other errors", async () => {
    const errors: unknown[] = [];
    const unreachable = storeThat(new Error("Query read timeout"));
    const cut = new ResponseCache(new MemoryBackend(1000), unreachable.store, (error) => errors.push(error));
    await expect(cut.policyFor(subjects, settings)).rejects.toThrow("Query read timeout");
    const broken = storeThat(Object.assign(new Error("relation does not exist"), { code: "42P01" }));
    const other = new ResponseCache(new MemoryBackend(1000), broken.store, (error) => errors.push(error));
    expect(await other.policyFor(subjects, settings)).toBeNull();
    expect(errors).toHaveLength(1);
    expect(other.counts().errors).toBe(1);
  });
});
