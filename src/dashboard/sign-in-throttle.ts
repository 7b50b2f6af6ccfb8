// Sign-in and redemption throttling for the whole gateway (every worker and process on the
// database): at most 5 attempts per (email or account, IP) and 50 per IP in a sliding 15-minute
// window; beyond that 429 rate_limit_error with Retry-After until the oldest leaves the window. An
// attempt counts from when it starts (so parallel attempts cannot all slip under the limit); a
// success takes its own attempt back and clears the (who, IP) count.
import type { AttemptsStore } from "../store/attempts-store.js";

export interface ThrottleLimits {
  perWhoAndIp: number;
  perIp: number;
  windowMs: number;
}

export const DEFAULT_THROTTLE: ThrottleLimits = { perWhoAndIp: 5, perIp: 50, windowMs: 15 * 60_000 };

/** An attempt taken: give it back with succeeded(); a failure leaves it counted. */
export interface Attempt {
  wait: number;
  succeeded(): Promise<void>;
}

export class AttemptThrottle {
  constructor(
    private readonly attempts: AttemptsStore,
    /** What is throttled ("signin", "redeem"): each has its own counts. */
    private readonly scope: string,
    private readonly limits: ThrottleLimits = DEFAULT_THROTTLE,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes an attempt for (who, ip), or says how many seconds to wait (wait > 0, nothing taken). */
  async begin(who: string, ip: string): Promise<Attempt> {
    const whoAndIp = `${this.scope}:w:${who}|${ip}`;
    const limits = [
      { subject: whoAndIp, limit: this.limits.perWhoAndIp },
      { subject: `${this.scope}:i:${ip}`, limit: this.limits.perIp },
    ];
    const taken = await this.attempts.take(limits, this.limits.windowMs, this.now());
    return { wait: taken.wait, succeeded: () => this.attempts.release(taken.ids, [whoAndIp]) };
  }
}
