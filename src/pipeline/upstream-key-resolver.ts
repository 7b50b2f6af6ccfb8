// contract item 7: the keys tried for a request are the account's own keys for that provider when it
// has some, otherwise the provider's shared keys. Own keys are cached per account for a few seconds
// (and dropped at once when this process changes them), so the hot path does not query per request.
import type { ProviderConfig } from "../core/catalog.js";
import type { Store } from "../store/index.js";
import type { Scrubber } from "./scrub.js";

const TTL_MS = 5_000;

interface Entry {
  byProvider: Map<string, string[]>;
  /** The shared scrubber plus this account's own keys; null when it has none. */
  scrubber: Scrubber | null;
  expiresAt: number;
}

export class UpstreamKeyResolver {
  readonly #cache = new Map<string, Entry>();

  constructor(
    private readonly store: Store,
    /** Builds a scrubber that also removes the given secrets (an account's own keys). */
    private readonly scrubberWith: (extraSecrets: string[]) => Scrubber,
  ) {}

  async keysFor(accountId: string, provider: ProviderConfig): Promise<{ keys: string[]; scope: string; scrubber: Scrubber | null }> {
    const entry = await this.#entry(accountId);
    const own = entry.byProvider.get(provider.name);
    if (own && own.length > 0) return { keys: own, scope: `${provider.name}:${accountId}`, scrubber: entry.scrubber };
    return { keys: provider.sharedKeys, scope: provider.name, scrubber: entry.scrubber };
  }

  async #entry(accountId: string): Promise<Entry> {
    const now = Date.now();
    const cached = this.#cache.get(accountId);
    if (cached && cached.expiresAt > now) return cached;
    const byProvider = await this.store.upstreamKeys.secretsByProvider(accountId);
    const own = [...byProvider.values()].flat();
    const entry = { byProvider, scrubber: own.length > 0 ? this.scrubberWith(own) : null, expiresAt: now + TTL_MS };
    if (this.#cache.size > 50_000) this.#cache.clear();
    this.#cache.set(accountId, entry);
    return entry;
  }

  invalidate(accountId: string): void {
    this.#cache.delete(accountId);
  }
}
