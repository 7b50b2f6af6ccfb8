// Sign-in throttling, in memory per process: at most 5 failed attempts per (email, IP) and 50 per IP
// in a sliding 15-minute window; beyond that 429 rate_limit_error with Retry-After until the oldest
// failure leaves the window. A success clears the (email, IP) counter. Several gateway processes each
// keep their own counters, so the effective limit is per process (documented in docs/dashboard.md).
export interface ThrottleLimits {
  perEmailAndIp: number;
  perIp: number;
  windowMs: number;
}

export const DEFAULT_THROTTLE: ThrottleLimits = { perEmailAndIp: 5, perIp: 50, windowMs: 15 * 60_000 };
const MAX_TRACKED = 50_000;

export class SignInThrottle {
  readonly #failures = new Map<string, number[]>();

  constructor(private readonly limits: ThrottleLimits = DEFAULT_THROTTLE) {}

  /** Seconds to wait before another attempt, or 0 when one is allowed now. */
  retryAfter(email: string, ip: string, now = Date.now()): number {
    const waits = [this.#wait(`e:${email}|${ip}`, this.limits.perEmailAndIp, now), this.#wait(`i:${ip}`, this.limits.perIp, now)];
    return Math.max(...waits);
  }

  recordFailure(email: string, ip: string, now = Date.now()): void {
    // A flood of distinct keys must not grow memory without bound; dropping all counters is the
    // blunt but safe reset (the per-IP counter re-arms quickly for an attacker who caused it).
    if (this.#failures.size > MAX_TRACKED) this.#failures.clear();
    for (const key of [`e:${email}|${ip}`, `i:${ip}`]) {
      const list = this.#recent(key, now);
      list.push(now);
      this.#failures.set(key, list);
    }
  }

  recordSuccess(email: string, ip: string): void {
    this.#failures.delete(`e:${email}|${ip}`);
  }

  #recent(key: string, now: number): number[] {
    return (this.#failures.get(key) ?? []).filter((t) => t > now - this.limits.windowMs);
  }

  #wait(key: string, limit: number, now: number): number {
    const list = this.#recent(key, now);
    if (list.length === 0) this.#failures.delete(key);
    if (list.length < limit) return 0;
    const oldest = list[list.length - limit]!;
    return Math.max(1, Math.ceil((oldest + this.limits.windowMs - now) / 1000));
  }
}
