// Everything the request pipeline uses, built once at start (see app.ts).
import type { Logger } from "pino";
import type { Billing } from "../billing/types.js";
import type { GatewayConfig } from "../config/load.js";
import type { Store } from "../store/index.js";
import type { UpstreamHealth } from "../upstreams/upstream-health.js";
import type { AuthCache } from "./auth-cache.js";
import type { KeyRotation } from "./failover.js";
import type { Scrubber } from "./scrub.js";
import type { UpstreamKeyResolver } from "./upstream-key-resolver.js";
import type { RefusedKeys } from "./refused-keys.js";
import type { SettlementRetries } from "./settlement-retries.js";
import type { GatewayMetrics } from "../observability/metrics.js";
import type { Tracing } from "../observability/tracing.js";
import type { RequestLog } from "../requestlog/request-log.js";
import type { ResponseCache } from "./response-cache/response-cache.js";

export interface PipelineServices {
  config: GatewayConfig;
  store: Store;
  logger: Logger;
  authCache: AuthCache;
  rotation: KeyRotation;
  /** Circuit breakers per upstream key, shared with the other processes on the database. */
  health: UpstreamHealth;
  billing: Billing;
  scrubber: Scrubber;
  upstreamKeys: UpstreamKeyResolver;
  /** Shared keys the upstream refused (401/403) in this snapshot: skipped, and disabled in the catalog. */
  refusedKeys: RefusedKeys;
  settlementRetries: SettlementRetries;
  /** Prometheus metrics; null when the config has no `metrics` section. */
  metrics: GatewayMetrics | null;
  /** OpenTelemetry traces; null unless the OTEL_* variables turn them on. */
  tracing: Tracing | null;
  /** The request log's buffer (ADR 0023); null when request_log.enabled is false. */
  requestLog: RequestLog | null;
  /** The response cache (ADR 0044): used by the requests whose key or workspace opted in; null: none (tests). */
  responseCache: ResponseCache | null;
}
