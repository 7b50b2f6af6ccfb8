// Stage: call the upstream with failover across keys, once for every route.
// A 429 or no HTTP response moves to the next key; any other answer ends the loop.
// All keys 429 -> 429 rate_limit_error with the upstream's Retry-After; all without a response ->
// 502 provider_error; a mix of both -> 429 (retrying later can succeed once the limits reset).
import { GatewayError } from "../errors/catalogue.js";
import { NoResponseError } from "../providers/upstream-client.js";

export type AttemptOutcome<T> =
  | { kind: "ok"; value: T }
  | { kind: "rate_limited"; retryAfter: string | null };

export interface FailoverResult<T> {
  value: T;
  attempts: number;
  key: string;
}

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

export async function withFailover<T>(
  rotation: KeyRotation,
  scope: string,
  keys: readonly string[],
  attempt: (key: string) => Promise<AttemptOutcome<T>>,
  onAttempt?: (attempts: number) => void,
): Promise<FailoverResult<T>> {
  if (keys.length === 0) throw new GatewayError("provider_error", "No upstream key is configured for this provider.");
  const order = rotation.order(scope, keys);
  if (order.length === 0) {
    const seconds = rotation.secondsUntilReady(keys);
    throw new GatewayError("rate_limit_error", undefined, { headers: { "retry-after": String(seconds) } });
  }
  let rateLimited = 0;
  let retryAfter: string | null = null;
  let lastNetworkReason = "";
  let attempts = 0;
  for (const key of order) {
    attempts += 1;
    onAttempt?.(attempts);
    try {
      const outcome = await attempt(key);
      if (outcome.kind === "ok") {
        rotation.succeeded(key);
        return { value: outcome.value, attempts, key };
      }
      rateLimited += 1;
      retryAfter = outcome.retryAfter ?? retryAfter;
      rotation.coolDown(key, outcome.retryAfter);
    } catch (error) {
      if (error instanceof NoResponseError) {
        lastNetworkReason = error.reason;
        continue;
      }
      throw error;
    }
  }
  if (rateLimited > 0) {
    const headers: Record<string, string> = {};
    if (retryAfter) headers["retry-after"] = retryAfter;
    throw new GatewayError("rate_limit_error", undefined, { headers });
  }
  throw new GatewayError("provider_error", `The upstream provider could not be reached (${lastNetworkReason}).`);
}
