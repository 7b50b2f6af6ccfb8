// Why an upstream request got no HTTP response, as the pipeline tells the cases apart.

/** The upstream gave no HTTP response: refused, DNS, reset, or a timeout before headers. */
export class NoResponseError extends Error {
  override name = "NoResponseError";
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * The request waited the provider's connection_wait_ms for a free connection and was never sent: the
 * gateway's own queue, not the upstream's health (no failover to the same pool, no breaker count).
 */
export class ConnectionWaitTimeoutError extends NoResponseError {
  override name = "ConnectionWaitTimeoutError";
  constructor(readonly waitedMs: number) {
    super(`no upstream connection was free within ${waitedMs} ms`);
  }
}
