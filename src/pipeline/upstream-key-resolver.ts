// SPEC item 7: the keys tried for a request are the account's own keys for that provider when it
// has any, otherwise the provider's shared keys. Own keys are cached per account for a few seconds
// (and dropped at once when this process changes them), so the hot path does not query per request.
import type { ProviderConfig } from "../config/load.js";
import type { Store } from "../store/index.js";

const TTL_MS = 5_000;

export class UpstreamKeyResolver {
  readonly #cache = new Map<string, { byProvider: Map<string, string[]>; expiresAt: number }>();

  constructor(private readonly store: Store) {}

  async keysFor(accountId: string, provider: ProviderConfig): Promise<{ keys: string[]; scope: string }> {
    const now = Date.now();
    let entry = this.#cache.get(accountId);
    if (!entry || entry.expiresAt <= now) {
      entry = { byProvider: await this.store.upstreamKeys.secretsByProvider(accountId), expiresAt: now + TTL_MS };
      if (this.#cache.size > 50_000) this.#cache.clear();
      this.#cache.set(accountId, entry);
    }
    const own = entry.byProvider.get(provider.name);
    if (own && own.length > 0) return { keys: own, scope: `${provider.name}:${accountId}` };
    return { keys: provider.sharedKeys, scope: provider.name };
  }

  /** Every own key currently cached, so the scrubber can remove them too. */
  ownKeysOf(accountId: string): string[] {
    return [...(this.#cache.get(accountId)?.byProvider.values() ?? [])].flat();
  }

  invalidate(accountId: string): void {
    this.#cache.delete(accountId);
  }
}
