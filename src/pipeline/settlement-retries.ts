// A stream whose content already reached the client cannot be answered with 502 any more. If its
// settlement fails, the charge is retried here with backoff (settlement is idempotent by request
// id) while its hold keeps the amount reserved, so the charge is not lost. While tracing is on, each
// retry is a "gateway.settlement_retry" span in the request's trace (after the request's own span ended).
import type { Logger } from "pino";
import type { Billing, Hold } from "../billing/types.js";
import type { Usage } from "../core/usage.js";
import { endSpan, type RequestTrace } from "../observability/spans.js";

const DELAYS_MS = [250, 1_000, 5_000, 15_000, 60_000, 300_000];

export class SettlementRetries {
  #pending = 0;

  constructor(
    private readonly billing: Billing,
    private readonly logger: Logger,
  ) {}

  get pending(): number {
    return this.#pending;
  }

  /**
   * Gives back the hold of a request that was refused after admission because its settlement failed
   * (nothing charged): retried with the same backoff while the database is unreachable, instead of
   * leaving the amount reserved until the sweeper's expiry (15 minutes).
   */
  releaseLater(hold: Hold, attempt = 0): void {
    const delay = attempt === 0 ? 0 : DELAYS_MS[Math.min(attempt - 1, DELAYS_MS.length - 1)]!;
    const timer = setTimeout(() => {
      this.billing.release(hold).catch((error: unknown) => {
        this.logger.warn({ request_id: hold.requestId, attempt: attempt + 1, err: error }, "hold release failed; retrying");
        this.releaseLater(hold, attempt + 1);
      });
    }, delay);
    timer.unref();
  }

  schedule(hold: Hold, usage: Usage, provider: string, trace?: RequestTrace, attempt = 0): void {
    if (attempt === 0) this.#pending += 1;
    const delay = DELAYS_MS[Math.min(attempt, DELAYS_MS.length - 1)]!;
    const timer = setTimeout(() => {
      const span = trace?.tracing.child(trace, "gateway.settlement_retry", { "gateway.attempt": attempt + 1 });
      this.billing.settle(hold, usage, provider).then(
        () => {
          this.#pending -= 1;
          if (span !== undefined) endSpan(span, {});
          this.logger.info({ request_id: hold.requestId, attempt: attempt + 1 }, "deferred settlement recorded");
        },
        (error: unknown) => {
          if (span !== undefined) endSpan(span, {}, (error as { type?: string } | null)?.type ?? "settlement_failed");
          this.logger.error({ request_id: hold.requestId, attempt: attempt + 1, err: error }, "deferred settlement failed; retrying");
          this.schedule(hold, usage, provider, trace, attempt + 1);
        },
      );
    }, delay);
    timer.unref();
  }
}
