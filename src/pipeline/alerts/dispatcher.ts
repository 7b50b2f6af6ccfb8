// The alert dispatcher (ADR 0040): one per process, it claims due deliveries with a lease, sends each
// with a bounded wait (alerts.attempt_timeout_ms covers connect, headers and body), and records the
// outcome: delivered on a 2xx, else due again after a doubling backoff until alerts.max_attempts.
// Redirects are not followed. Nothing on the request path waits for it: events are rows in the outbox.
import type { Logger } from "pino";
import type { AlertSettings } from "../../config/gateway-config.js";
import type { AlertsStore, ClaimedDelivery } from "../../store/alerts-store.js";
import { bodyOf, envelopeOf, SIGNATURE_HEADER, signatureOf } from "./payloads.js";

const BATCH = 20;
const MAX_BACKOFF_MS = 6 * 3_600_000;

export interface AlertDispatcherDeps {
  alerts: AlertsStore;
  logger: Logger;
  settings(): AlertSettings;
  clock?: () => number;
}

/** The wait before retry number `attempt` (1 after the first failure): doubling from backoffMs, capped. */
export function backoffAfter(attempt: number, backoffMs: number): number {
  return Math.min(backoffMs * 2 ** Math.max(0, attempt - 1), MAX_BACKOFF_MS);
}

export class AlertDispatcher {
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> | null = null;
  #again = false;
  /** Aborted by stop(): a pass ends at once, attempts in flight are recorded as not sent. */
  readonly #stopping = new AbortController();

  constructor(private readonly deps: AlertDispatcherDeps) {}

  start(): void {
    this.#timer = setInterval(() => void this.tick(), this.deps.settings().pollMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#stopping.abort();
    await this.#ticking;
  }

  /** Sends what is due now; one pass at a time (a call during a pass runs another after it). */
  tick(): Promise<void> {
    if (this.#ticking) {
      this.#again = true;
      return this.#ticking;
    }
    this.#ticking = this.#pass()
      .catch((err: unknown) => this.deps.logger.warn({ err }, "alert delivery pass failed"))
      .finally(() => {
        this.#ticking = null;
        if (this.#again && this.#timer) {
          this.#again = false;
          void this.tick();
        }
      });
    return this.#ticking;
  }

  async #pass(): Promise<void> {
    const clock = this.deps.clock ?? Date.now;
    const settings = this.deps.settings();
    while (!this.#stopping.signal.aborted) {
      const now = clock();
      const claimed = await this.deps.alerts.claimDue(now, now + settings.attemptTimeoutMs + 10_000, BATCH);
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((delivery) => this.#deliver(delivery, settings, clock)));
      if (claimed.length < BATCH) return;
    }
  }

  async #deliver(delivery: ClaimedDelivery, settings: AlertSettings, clock: () => number): Promise<void> {
    const envelope = envelopeOf(delivery.event);
    const body = bodyOf(delivery.subscription.format, envelope);
    const sentAt = clock();
    let status: number | null = null;
    let error: string | null = null;
    try {
      const response = await fetch(delivery.subscription.url, {
        method: "POST",
        redirect: "manual",
        signal: AbortSignal.any([AbortSignal.timeout(settings.attemptTimeoutMs), this.#stopping.signal]),
        headers: {
          "content-type": "application/json",
          "user-agent": "model-gateway-alerts/1",
          "x-gateway-event": envelope.type,
          "x-gateway-event-id": envelope.id,
          "x-gateway-delivery": delivery.id,
          [SIGNATURE_HEADER]: signatureOf(delivery.subscription.secret, Math.floor(sentAt / 1000), body),
        },
        body,
      });
      status = response.status;
      await response.body?.cancel().catch(() => undefined);
      if (status < 200 || status >= 300) error = `HTTP ${status}`;
    } catch (err) {
      error = err instanceof Error && err.name === "TimeoutError" ? `no answer within ${settings.attemptTimeoutMs} ms` : `not sent: ${describe(err)}`;
    }
    const attempt = delivery.attempts + 1;
    const ok = error === null;
    const retryAt = ok || attempt >= settings.maxAttempts ? null : clock() + backoffAfter(attempt, settings.backoffMs);
    await this.deps.alerts.recordAttempt(delivery.id, { ok, status, error, retryAt }, clock());
    if (!ok) this.deps.logger.info({ delivery: delivery.id, subscription: delivery.subscription.id, attempt, status, err: error }, "alert delivery failed");
  }
}

function describe(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (cause && typeof cause.code === "string") return cause.code;
  return err instanceof Error ? err.message.slice(0, 200) : "unknown error";
}
