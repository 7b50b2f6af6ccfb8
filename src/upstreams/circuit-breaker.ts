// One circuit breaker: the outcomes of recent requests to one upstream scope (an upstream key today,
// a routing deployment later) in a sliding time window, and the state they put it in.
// closed: every request passes; it opens once the failures reach `failureThreshold` of at least
// `minRequests` requests in the window. open: nothing passes until `openMs` has gone by. half_open:
// up to `halfOpenTrials` trial requests pass; a trial's success closes it (with an empty window), a
// trial's failure opens it again. A failure is no HTTP response or a 5xx; what the caller reports
// as neutral (a 429, another 4xx, a client that went away) counts for nothing.
// The shared state other processes write (see upstream-health.ts) is adopted with adopt().

export interface BreakerSettings {
  windowMs: number;
  minRequests: number;
  /** The failure ratio (0..1] over the window at which the breaker opens. */
  failureThreshold: number;
  openMs: number;
  halfOpenTrials: number;
}

export const DEFAULT_BREAKER_SETTINGS: BreakerSettings = { windowMs: 30_000, minRequests: 10, failureThreshold: 0.5, openMs: 30_000, halfOpenTrials: 1 };

export type BreakerState = "closed" | "open" | "half_open";

/** What was stored or read as the shared state: half-open is derived from opened_until. */
export type SharedBreakerState = { state: "closed" } | { state: "open"; openedUntil: number };

/** Permission for one request; hand it back to record() or release(). */
export interface BreakerPass {
  trial: boolean;
  generation: number;
}

export interface BreakerStats {
  requests: number;
  failures: number;
  /** Median latency of the window's requests (ms), null without any. */
  p50Ms: number | null;
}

/** Samples kept per breaker at most: enough for any sane window, bounded under a flood. */
const MAX_SAMPLES = 2_000;

/**
 * The outcomes in the window, oldest first, in a ring of MAX_SAMPLES slots: adding one and evicting
 * the oldest are O(1). (An array spliced at its front cost ~12 µs per request once full, under load.)
 */
class SampleRing {
  readonly #at = new Float64Array(MAX_SAMPLES);
  readonly #latencyMs = new Float64Array(MAX_SAMPLES);
  readonly #failed = new Uint8Array(MAX_SAMPLES);
  #start = 0;
  size = 0;
  failures = 0;

  push(at: number, failed: boolean, latencyMs: number): void {
    if (this.size === MAX_SAMPLES) this.#dropOldest();
    const slot = (this.#start + this.size) % MAX_SAMPLES;
    this.#at[slot] = at;
    this.#latencyMs[slot] = latencyMs;
    this.#failed[slot] = failed ? 1 : 0;
    this.size += 1;
    if (failed) this.failures += 1;
  }

  /** Drops the samples taken at or before `oldest`. */
  evict(oldest: number): void {
    while (this.size > 0 && this.#at[this.#start]! <= oldest) this.#dropOldest();
  }

  clear(): void {
    this.#start = 0;
    this.size = 0;
    this.failures = 0;
  }

  latencies(): number[] {
    const out = new Array<number>(this.size);
    for (let i = 0; i < this.size; i++) out[i] = this.#latencyMs[(this.#start + i) % MAX_SAMPLES]!;
    return out;
  }

  #dropOldest(): void {
    if (this.#failed[this.#start] === 1) this.failures -= 1;
    this.#start = (this.#start + 1) % MAX_SAMPLES;
    this.size -= 1;
  }
}

export class CircuitBreaker {
  readonly #samples = new SampleRing();
  /** 0 while closed; otherwise when the open period ends and trials may start. */
  #openedUntil = 0;
  #trialsInFlight = 0;
  /** Bumped by every transition, so a pass from before one cannot decide the state after it. */
  #generation = 0;
  /** When the state last changed (epoch ms), here or in the shared state adopted. */
  changedAt = 0;

  constructor(private readonly settings: BreakerSettings) {}

  state(now: number): BreakerState {
    if (this.#openedUntil === 0) return "closed";
    return now < this.#openedUntil ? "open" : "half_open";
  }

  get openedUntil(): number {
    return this.#openedUntil;
  }

  /** A pass for one request, or null while the breaker refuses it. */
  tryPass(now: number): BreakerPass | null {
    const state = this.state(now);
    if (state === "closed") return { trial: false, generation: this.#generation };
    if (state === "open" || this.#trialsInFlight >= this.settings.halfOpenTrials) return null;
    this.#trialsInFlight += 1;
    return { trial: true, generation: this.#generation };
  }

  /** Records a request's outcome; returns the new shared state when it changed the state. */
  record(pass: BreakerPass, failed: boolean, latencyMs: number, now: number): SharedBreakerState | null {
    const decidesTrial = pass.trial && pass.generation === this.#generation;
    if (decidesTrial) this.#trialsInFlight -= 1;
    this.#samples.push(now, failed, latencyMs);
    this.#evict(now);
    if (decidesTrial) return failed ? this.#open(now) : this.#close(now);
    if (this.#openedUntil !== 0 || !failed) return null;
    const requests = this.#samples.size;
    if (requests >= this.settings.minRequests && this.#samples.failures >= this.settings.failureThreshold * requests) return this.#open(now);
    return null;
  }

  /** A pass whose request told nothing about the upstream's health. */
  release(pass: BreakerPass): void {
    if (pass.trial && pass.generation === this.#generation) this.#trialsInFlight -= 1;
  }

  /** Takes over a state another process stored, unless this one changed more recently. */
  adopt(shared: SharedBreakerState, changedAt: number): void {
    if (changedAt <= this.changedAt) return;
    if (shared.state === "open") this.#transition(shared.openedUntil, changedAt);
    else this.#closeAt(changedAt);
  }

  stats(now: number): BreakerStats {
    this.#evict(now);
    const latencies = this.#samples.latencies().sort((a, b) => a - b);
    const p50Ms = latencies.length === 0 ? null : latencies[Math.floor((latencies.length - 1) / 2)]!;
    return { requests: this.#samples.size, failures: this.#samples.failures, p50Ms };
  }

  #open(now: number): SharedBreakerState {
    this.#transition(now + this.settings.openMs, now);
    return { state: "open", openedUntil: this.#openedUntil };
  }

  #close(now: number): SharedBreakerState {
    this.#closeAt(now);
    return { state: "closed" };
  }

  #closeAt(changedAt: number): void {
    this.#samples.clear();
    this.#transition(0, changedAt);
  }

  #transition(openedUntil: number, changedAt: number): void {
    this.#openedUntil = openedUntil;
    this.#trialsInFlight = 0;
    this.#generation += 1;
    this.changedAt = changedAt;
  }

  #evict(now: number): void {
    this.#samples.evict(now - this.settings.windowMs);
  }
}
