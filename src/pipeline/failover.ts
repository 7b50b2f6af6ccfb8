// Key rotation and cooldowns for forward.ts's failover: where each request starts in a key set,
// and which keys sit out after a 429 (for the upstream's Retry-After, else an exponential backoff).
const DEFAULT_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 60_000;

/** Per-key cooldowns after a 429, and the rotating start position per key set. */
export class KeyRotation {
  readonly #cooldownUntil = new Map<string, number>();
  readonly #strikes = new Map<string, number>();
  readonly #cursor = new Map<string, number>();

  /** The order to try keys in: a rotated start, without the keys that are cooling down. */
  order(scope: string, keys: readonly string[], now = Date.now()): string[] {
    const start = this.#cursor.get(scope) ?? 0;
    this.#cursor.set(scope, (start + 1) % Number.MAX_SAFE_INTEGER);
    const rotated = keys.map((_, i) => keys[(start + i) % keys.length]!);
    return rotated.filter((k) => (this.#cooldownUntil.get(k) ?? 0) <= now);
  }

  /** Seconds until the first of these keys leaves its cooldown. */
  secondsUntilReady(keys: readonly string[], now = Date.now()): number {
    const soonest = Math.min(...keys.map((k) => this.#cooldownUntil.get(k) ?? now));
    return Math.max(1, Math.ceil((soonest - now) / 1000));
  }

  coolDown(key: string, retryAfter: string | null, now = Date.now()): void {
    const strikes = (this.#strikes.get(key) ?? 0) + 1;
    this.#strikes.set(key, strikes);
    const backoff = Math.min(MAX_BACKOFF_MS, DEFAULT_BACKOFF_MS * 2 ** (strikes - 1));
    this.#cooldownUntil.set(key, now + (parseRetryAfterMs(retryAfter, now) ?? backoff));
  }

  /** When the key's 429 cooldown ends (epoch ms); 0 when it never cooled down. */
  cooldownEnd(key: string): number {
    return this.#cooldownUntil.get(key) ?? 0;
  }

  /** How many keys are cooling down now (the gateway_upstream_keys_cooling_down gauge). */
  coolingDown(now = Date.now()): number {
    let count = 0;
    for (const until of this.#cooldownUntil.values()) if (until > now) count += 1;
    return count;
  }

  succeeded(key: string): void {
    if (this.#strikes.has(key)) {
      this.#strikes.delete(key);
      this.#cooldownUntil.delete(key);
    }
  }
}

export function parseRetryAfterMs(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
