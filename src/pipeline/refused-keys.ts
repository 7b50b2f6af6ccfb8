// Shared provider keys the upstream refused (401 or 403) during this config snapshot: skipped by
// every later request of this process at once, while the catalog disables the key for every
// process (LiveCatalog.disableRefusedKey). The next snapshot no longer lists the key, so the set
// lives and dies with its snapshot; a key the operator enables again comes back with the next one.
// Without a database catalog (catalog.source: file) nothing is disabled: the file is the truth.
export class RefusedKeys {
  readonly #refused = new Set<string>();

  constructor(
    /** Disables the key for every process; null when the catalog cannot (it comes from the file). */
    private readonly disable: ((provider: string, key: string, status: number) => Promise<unknown>) | null,
    private readonly onError: (error: unknown) => void,
  ) {}

  usable(keys: readonly string[]): readonly string[] {
    return this.#refused.size === 0 ? keys : keys.filter((key) => !this.#refused.has(key));
  }

  /** True when the key is now skipped (and being disabled); false when refusals do not disable keys here. */
  refuse(provider: string, key: string, status: number): boolean {
    if (this.disable === null) return false;
    this.#refused.add(key);
    this.disable(provider, key, status).catch(this.onError);
    return true;
  }
}
