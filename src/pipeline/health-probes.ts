// Active health probes (docs/configuration.md, "Health probes"; decision 0036): a routing group's
// deployment with `health_check` gets the key test's smallest request (key-test.ts) every
// `interval_s`, with one of its provider's usable shared keys and a bounded wait. One process of the
// whole gateway probes: the holder of the "health_probes" lease (store/leases-store.ts), renewed
// every second and taken over by another process within the lease's 15 s when the holder stops.
// A failing probe (no response, a timeout, a 5xx or any 4xx but 429, 401 and 403) opens the
// deployment's circuit breaker for every process until the next probe is due, so routing skips it;
// a passing one closes it. A 429 says nothing about the deployment, and a 401/403 is the key's
// fault (it is disabled as in traffic): neither changes the breaker. The answer's cost is the
// operator's ledger row, as for a key test; the last result of each deployment is kept for the
// Upstreams page. Probes are not audited: they are the gateway's, not an operator's, actions.
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "pino";
import type { Deployment, ProviderConfig } from "../core/catalog.js";
import type { GatewayConfig } from "../config/load.js";
import type { Store } from "../store/index.js";
import type { ProbeResult } from "../store/health-probes-store.js";
import { transact } from "../store/transact.js";
import type { UpstreamHealth } from "../upstreams/upstream-health.js";
import { chargeOperator, sendKeyTest, type SentKeyTest } from "./key-test.js";

export const PROBE_LEASE = "health_probes";
const TICK_MS = 1_000;
const LEASE_MS = 15_000;

export interface ProbeTarget {
  /** The model's id. */
  model: string;
  deployment: Deployment;
  intervalMs: number;
  timeoutMs: number;
}

/** Every deployment of the config with a health_check. */
export function probeTargets(config: GatewayConfig): ProbeTarget[] {
  const targets: ProbeTarget[] = [];
  for (const model of config.models.values()) {
    for (const deployment of model.group?.deployments ?? []) {
      if (deployment.healthCheck) targets.push({ model: model.id, deployment, ...deployment.healthCheck });
    }
  }
  return targets;
}

export interface HealthProbeDeps {
  store: Store;
  health: UpstreamHealth;
  logger: Logger;
  /** The config served now. */
  config(): GatewayConfig;
  /** The provider's shared keys neither disabled nor refused in the snapshot served now. */
  usableKeys(provider: ProviderConfig): readonly string[];
  /** The upstream refused a key with 401/403: disabled as in traffic. */
  onRefused(provider: string, key: string, status: number): Promise<unknown>;
  tickMs?: number;
  leaseMs?: number;
  clock?: () => number;
}

export class HealthProbes {
  /** This process's name in the lease row (unique per gateway app, also several in one process). */
  readonly holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly #inFlight = new Map<string, Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> | null = null;
  #holding = false;

  constructor(private readonly deps: HealthProbeDeps) {}

  /** Whether this process held the lease at its last tick (it probes). */
  get holding(): boolean {
    return this.#holding;
  }

  start(): void {
    this.#timer = setInterval(() => void this.tick(), this.deps.tickMs ?? TICK_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#ticking;
    await Promise.all(this.#inFlight.values());
    if (this.#holding) await this.deps.store.leases.release(PROBE_LEASE, this.holder).catch(() => undefined);
    this.#holding = false;
  }

  /** Takes or renews the lease, then starts the probes that are due; one tick at a time. */
  tick(): Promise<void> {
    this.#ticking ??= this.#tick()
      .catch((err: unknown) => this.deps.logger.warn({ err }, "health probes failed"))
      .finally(() => {
        this.#ticking = null;
      });
    return this.#ticking;
  }

  async #tick(): Promise<void> {
    const { store } = this.deps;
    const clock = this.deps.clock ?? Date.now;
    const targets = probeTargets(this.deps.config());
    const now = clock();
    if (targets.length === 0) {
      if (this.#holding) await store.leases.release(PROBE_LEASE, this.holder);
      this.#holding = false;
      return;
    }
    this.#holding = await store.leases.acquire(PROBE_LEASE, this.holder, now, now + (this.deps.leaseMs ?? LEASE_MS));
    if (!this.#holding) return;
    // Due from the results in the database: a process taking over goes on where the last one stopped.
    const last = new Map((await store.healthProbes.all()).map((r) => [r.scope, r]));
    for (const target of targets) {
      const scope = target.deployment.breakerScope;
      const previous = last.get(scope);
      if (this.#inFlight.has(scope) || (previous && previous.checkedAt + target.intervalMs > now)) continue;
      const probe = this.#probe(target, previous)
        .catch((err: unknown) => this.deps.logger.warn({ err, scope }, "health probe failed to run"))
        .finally(() => this.#inFlight.delete(scope));
      this.#inFlight.set(scope, probe);
    }
  }

  async #probe(target: ProbeTarget, previous: ProbeResult | undefined): Promise<void> {
    const { store, health, logger } = this.deps;
    const clock = this.deps.clock ?? Date.now;
    const { deployment } = target;
    const provider = deployment.model.provider;
    const keys = this.deps.usableKeys(provider);
    let sent: SentKeyTest | null = null;
    let error: string | null = null;
    if (keys.length === 0) error = "no usable shared key of the provider";
    else {
      const key = keys[Math.floor(Math.random() * keys.length)]!;
      try {
        sent = await sendKeyTest(deployment.model, key, store.handle.dimensions, target.timeoutMs);
      } catch (err) {
        // A type without a test request (refused when the config was checked) or a signing failure.
        error = err instanceof Error ? err.message : String(err);
      }
      if (sent?.result.refused)
        await this.deps.onRefused(provider.name, key, sent.result.status!).catch((err: unknown) => logger.error({ err }, "disabling a refused provider key failed"));
    }
    const status = sent?.result.status ?? null;
    const verdict = sent?.result.ok ? "pass" : status === 429 || sent?.result.refused ? "inconclusive" : "fail";
    const checkedAt = clock();
    if (verdict !== "inconclusive") health.probed(deployment.breakerScope, verdict === "pass", checkedAt + target.intervalMs + target.timeoutMs);
    const failuresBefore = previous?.failuresInRow ?? 0;
    const result: ProbeResult = {
      scope: deployment.breakerScope,
      provider: provider.name,
      model: target.model,
      ok: verdict === "pass",
      status,
      latencyMs: sent?.result.latencyMs ?? 0,
      error: sent?.result.error ?? error,
      checkedAt,
      failuresInRow: verdict === "pass" ? 0 : verdict === "fail" ? failuresBefore + 1 : failuresBefore,
    };
    if (verdict === "fail") logger.warn({ deployment: `${target.model}/${deployment.name}`, status, error: result.error }, "health probe failed");
    const charged = sent;
    if (charged?.charge) await transact(store.db, (trx) => chargeOperator(trx, charged, store.handle.dimensions));
    await store.healthProbes.record(result);
  }
}
