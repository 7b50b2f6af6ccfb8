// The circuit breakers of this process, one per scope, kept in agreement with every other gateway
// process on the database: a process whose breaker opens or closes writes that to upstream_health
// (fire-and-forget: a request never waits on it, a failed write is logged), and every process polls
// the table every 500 ms for changes written by the others. The window's request count, failures and
// median latency are written every few seconds while a scope has traffic, for the status command.
// A scope names what a breaker guards: "key:<fingerprint>" for an upstream key,
// "deployment:<model>/<name>" for a routing group's deployment (src/pipeline/routing.ts).
import { createHash } from "node:crypto";
import type { Logger } from "pino";
import type { UpstreamErrorRow, UpstreamHealthStore } from "../store/upstream-health-store.js";
import { CircuitBreaker, type BreakerPass, type BreakerSettings, type BreakerState, type SharedBreakerState } from "./circuit-breaker.js";

export const BREAKER_POLL_MS = 500;
const WINDOW_WRITE_MS = 5_000;
/** Rows are re-read this far behind the newest change seen: writers' clocks and commits are not in order. */
const POLL_OVERLAP_MS = 2_000;
const MAX_BREAKERS = 50_000;
const MAX_FINGERPRINTS = 100_000;

/** A key's identity in the table, the CLI and logs: the first 12 hex of SHA-256 of provider and key. */
export function keyFingerprint(provider: string, key: string): string {
  return createHash("sha256").update(`${provider}\0${key}`).digest("hex").slice(0, 12);
}

export function keyScope(fingerprint: string): string {
  return `key:${fingerprint}`;
}

export type Outcome = "success" | "failure" | "neutral";

/** One request's permission to use a scope; settle() it exactly once. */
export interface UpstreamPass {
  scope: string;
  breaker: CircuitBreaker;
  pass: BreakerPass;
  startedAt: number;
}

export class UpstreamHealth {
  readonly #breakers = new Map<string, CircuitBreaker>();
  readonly #scopeOfKey = new Map<string, string>();
  readonly #withTraffic = new Set<string>();
  /** Each scope's latest error since its window was last written (and the key's 429 cooldown end). */
  readonly #errors = new Map<string, UpstreamErrorRow>();
  #newestChange = 0;
  /** Told when this process opens a breaker (the upstream.breaker_open alert); never awaited. */
  onOpened: ((scope: string, openedUntil: number) => void) | null = null;
  #pollTimer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;
  #windowTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: UpstreamHealthStore,
    readonly settings: BreakerSettings,
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The scope of one upstream key (cached: hashing per attempt would be wasted work). */
  scopeOfKey(provider: string, key: string): string {
    const id = `${provider}\0${key}`;
    let scope = this.#scopeOfKey.get(id);
    if (scope === undefined) {
      if (this.#scopeOfKey.size >= MAX_FINGERPRINTS) this.#scopeOfKey.clear();
      scope = keyScope(keyFingerprint(provider, key));
      this.#scopeOfKey.set(id, scope);
    }
    return scope;
  }

  /** A pass for one request to the scope, or null while its breaker is open (or out of trials). */
  pass(scope: string): UpstreamPass | null {
    const now = this.clock();
    const breaker = this.#breaker(scope);
    const pass = breaker.tryPass(now);
    return pass ? { scope, breaker, pass, startedAt: now } : null;
  }

  /** Whether the scope's breaker refuses everything now: a look that takes no trial. */
  isOpen(scope: string): boolean {
    return this.#breakers.get(scope)?.state(this.clock()) === "open";
  }

  settle(upstream: UpstreamPass, outcome: Outcome): void {
    if (outcome === "neutral") return upstream.breaker.release(upstream.pass);
    const now = this.clock();
    const changed = upstream.breaker.record(upstream.pass, outcome === "failure", now - upstream.startedAt, now);
    this.#withTraffic.add(upstream.scope);
    if (changed) this.#publish(upstream.scope, changed, now);
  }

  /**
   * An attempt's error on the scope, for the Upstreams page: what it was ("HTTP 503", "HTTP 429",
   * "no response: …") and, for a 429, when the key's cooldown ends. Written with the next window.
   */
  noteError(scope: string, error: string, cooldownUntil = 0): void {
    if (this.#errors.size >= MAX_FINGERPRINTS) this.#errors.clear();
    const previous = this.#errors.get(scope);
    this.#errors.set(scope, { lastError: error.slice(0, 200), lastErrorAt: this.clock(), cooldownUntil: Math.max(cooldownUntil, previous?.cooldownUntil ?? 0) });
    this.#withTraffic.add(scope);
  }

  /**
   * An active health probe's verdict on the scope (pipeline/health-probes.ts), for every process: a
   * failing probe opens its breaker until `openUntil`, a passing one closes it. Unchanged: nothing written.
   */
  probed(scope: string, ok: boolean, openUntil: number): void {
    const now = this.clock();
    const breaker = this.#breaker(scope);
    if (ok && breaker.state(now) === "closed") return;
    const state: SharedBreakerState = ok ? { state: "closed" } : { state: "open", openedUntil: openUntil };
    // After the breaker's last change, so adopt() takes it even within the same millisecond.
    const at = Math.max(now, breaker.changedAt + 1);
    breaker.adopt(state, at);
    this.#publish(scope, state, at);
  }

  /** Seconds until the first of these scopes admits a trial (at least 1). */
  secondsUntilTrial(scopes: readonly string[]): number {
    const now = this.clock();
    const soonest = Math.min(...scopes.map((s) => this.#breakers.get(s)?.openedUntil || now));
    return Math.max(1, Math.ceil((soonest - now) / 1000));
  }

  /** Reads the current shared state, then follows it; writes the windows of busy scopes. */
  async start(): Promise<void> {
    await this.poll();
    // One poll at a time: while the database is out of reach each waits out a timeout (decision
    // 0049), and polls one behind the other would hold a pooled connection each.
    this.#pollTimer = setInterval(() => {
      if (this.#polling !== undefined) return;
      this.#polling = this.poll()
        .catch((err: unknown) => this.logger.warn({ err }, "reading upstream health failed"))
        .finally(() => (this.#polling = undefined));
    }, BREAKER_POLL_MS);
    this.#windowTimer = setInterval(() => void this.writeWindows(), WINDOW_WRITE_MS);
    this.#pollTimer.unref();
    this.#windowTimer.unref();
  }

  stop(): void {
    clearInterval(this.#pollTimer);
    clearInterval(this.#windowTimer);
  }

  async poll(): Promise<void> {
    const rows = await this.store.changedSince(this.#newestChange === 0 ? 0 : this.#newestChange - POLL_OVERLAP_MS);
    for (const row of rows) {
      this.#newestChange = Math.max(this.#newestChange, row.changedAt);
      const breaker = row.state === "open" ? this.#breaker(row.scope) : this.#breakers.get(row.scope);
      breaker?.adopt(row.state === "open" ? { state: "open", openedUntil: row.openedUntil } : { state: "closed" }, row.changedAt);
    }
  }

  async writeWindows(): Promise<void> {
    const scopes = [...this.#withTraffic];
    this.#withTraffic.clear();
    const now = this.clock();
    for (const scope of scopes) {
      const breaker = this.#breakers.get(scope);
      if (!breaker) continue;
      const stats = breaker.stats(now);
      const error = this.#errors.get(scope);
      this.#errors.delete(scope);
      await this.store.writeWindow(scope, { ...stats, statsAt: now }, error).catch((err: unknown) => this.logger.warn({ err, scope }, "writing upstream health failed"));
    }
  }

  #publish(scope: string, state: SharedBreakerState, now: number): void {
    const openedUntil = state.state === "open" ? state.openedUntil : 0;
    this.logger.warn({ scope, state: state.state, opened_until: openedUntil || undefined }, state.state === "open" ? "circuit breaker opened" : "circuit breaker closed");
    if (state.state === "open") this.onOpened?.(scope, openedUntil);
    this.store
      .writeState({ scope, state: state.state, openedUntil, changedAt: now })
      .catch((err: unknown) => this.logger.warn({ err, scope }, "writing circuit breaker state failed"));
  }

  /** Breakers known to this process by state (the gateway_circuit_breakers gauge). */
  stateCounts(): Record<BreakerState, number> {
    const counts: Record<BreakerState, number> = { closed: 0, open: 0, half_open: 0 };
    const now = this.clock();
    for (const breaker of this.#breakers.values()) counts[breaker.state(now)] += 1;
    return counts;
  }

  #breaker(scope: string): CircuitBreaker {
    let breaker = this.#breakers.get(scope);
    if (!breaker) {
      if (this.#breakers.size >= MAX_BREAKERS) this.#forgetClosed();
      breaker = new CircuitBreaker(this.settings);
      this.#breakers.set(scope, breaker);
    }
    return breaker;
  }

  #forgetClosed(): void {
    const now = this.clock();
    for (const [scope, breaker] of this.#breakers) if (breaker.state(now) === "closed") this.#breakers.delete(scope);
  }
}
