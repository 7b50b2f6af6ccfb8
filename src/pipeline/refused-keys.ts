// Shared provider keys the upstream refused (401 or 403) or that are disabled, during this config
// snapshot: skipped by every later request of this process at once, while the catalog disables the
// key for every process (LiveCatalog.disableRefusedKey). With catalog.source: database the next
// snapshot no longer lists the key; with catalog.source: file the file still lists it, and each
// snapshot starts with the file's keys disabled now (config/file-keys.ts). Either way the set lives
// and dies with its snapshot, and a key the operator enables again comes back with the next one.
export class RefusedKeys {
  readonly #refused: Set<string>;
  /** The keys disabled when the snapshot was made, sorted: a new snapshot is due when they change. */
  readonly disabledAtStart: readonly string[];

  constructor(
    /** Disables the key for every process; null where refusals disable nothing. */
    private readonly disable: ((provider: string, key: string, status: number) => Promise<unknown>) | null,
    private readonly onError: (error: unknown) => void,
    /** Keys disabled when the snapshot was made (the config file's, which the file still lists). */
    disabled: readonly string[] = [],
  ) {
    this.#refused = new Set(disabled);
    this.disabledAtStart = [...this.#refused].sort();
  }

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
