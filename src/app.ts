// The composition root: config -> store -> services -> server. Everything a request needs is
// built here once; the request path reads no config and parses nothing but its own body.
import pino, { type Logger } from "pino";
import type { FastifyInstance } from "fastify";
import { registerAdminApiRoutes } from "./admin/index.js";
import { StoreBilling } from "./billing/billing-store.js";
import type { GatewayConfig } from "./config/load.js";
import { registerDashboardRoutes } from "./dashboard/index.js";
import { resolveServerSecret } from "./config/server-secret.js";
import { BlockLogDestination } from "./core/log-destination.js";
import type { RouteContext } from "./http/route-context.js";
import { registerAccountRoutes } from "./http/routes/account.js";
import { registerGatewayRoutes } from "./http/routes/gateway.js";
import { registerHealthRoutes } from "./http/routes/health.js";
import { registerModelRoutes } from "./http/routes/models.js";
import { buildServer, type RouteRegistrar } from "./http/server.js";
import { registerMediaRoutes } from "./media/register-media-routes.js";
import { mediaSettingsFromConfig } from "./media/settings.js";
import { AuthCache } from "./pipeline/auth-cache.js";
import { KeyRotation } from "./pipeline/failover.js";
import { createScrubber } from "./pipeline/scrub.js";
import type { PipelineServices } from "./pipeline/services.js";
import { SettlementRetries } from "./pipeline/settlement-retries.js";
import { UpstreamKeyResolver } from "./pipeline/upstream-key-resolver.js";
import { openStore, type Store } from "./store/index.js";
import { UpstreamHealth } from "./upstreams/health/upstream-health.js";
import type { GatewayMetrics } from "./observability/metrics.js";
import { registerMetricsRoutes, startMetricsListener } from "./observability/metrics-routes.js";
import { registerOpenApiRoutes } from "./openapi/routes.js";
import type { Tracing } from "./observability/tracing.js";
import type { Server } from "node:http";

export interface App {
  ctx: RouteContext;
  server: FastifyInstance;
  /** The separate metrics listener's URL (metrics.listen), null when there is none. */
  metricsUrl: string | null;
  close(): Promise<void>;
}

/** Every route family the server registers (exported so tests can enumerate the real routes). */
export const ROUTES: readonly RouteRegistrar[] = [
  registerHealthRoutes,
  registerModelRoutes,
  registerAccountRoutes,
  registerGatewayRoutes,
  registerMediaRoutes,
  registerDashboardRoutes,
  registerAdminApiRoutes,
  registerMetricsRoutes,
  registerOpenApiRoutes,
];

/**
 * One JSON line per request, written to stdout in blocks (core/log-destination.ts): a write per
 * line cost a thread-pool round trip and a wake-up of the event loop per request (~50 µs of CPU per
 * request at 1,000 req/s, and a thread competing with the event loop for the cores; bench/README.md).
 */
export function createLogger(level: string, destination: BlockLogDestination): Logger {
  return pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, destination);
}

export async function createApp(config: GatewayConfig, options: { logger?: Logger; now?: () => number; traceExportDelayMs?: number } = {}): Promise<App> {
  const logDestination = options.logger ? null : new BlockLogDestination(process.stdout.fd);
  const logger = options.logger ?? createLogger(config.logLevel, logDestination!);
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    sqlitePath: config.sqlitePath,
    secret: resolveServerSecret(config),
    backgroundCheckpoints: { onError: (message) => logger.warn({ err: message }, "SQLite background checkpoint failed") },
  });
  // The gateway's clock (epoch ms): billing's months, holds and periodic budgets, and key expiry; tests inject one.
  const now = options.now ?? Date.now;
  // Built before billing, whose write batches it times; its gauges read services built below, when scraped.
  // prom-client and the OpenTelemetry SDK are loaded only when configured: a gateway without them
  // neither loads nor starts them (decision 0018).
  const metrics: GatewayMetrics | null = config.metrics
    ? new (await import("./observability/metrics.js")).GatewayMetrics(config.metrics, {
        breakerStates: () => health.stateCounts(),
        keysCoolingDown: (): number => rotation.coolingDown(),
        settlementRetriesPending: (): number => settlementRetries.pending,
        holdsOutstanding: async () => countHolds(store),
      })
    : null;
  const dialect = store.handle.dialect;
  const billing: StoreBilling = new StoreBilling(store.handle, {
    now,
    onSweepError: (err) => logger.warn({ err }, "hold sweep failed"),
    onBatch: metrics ? (seconds) => metrics.observeBatch(dialect, seconds) : undefined,
  });
  const tracing: Tracing | null = config.tracing
    ? new (await import("./observability/tracing.js")).Tracing(config.tracing, options.traceExportDelayMs === undefined ? {} : { exportDelayMs: options.traceExportDelayMs })
    : null;
  const authCache = new AuthCache(store, now);
  await authCache.start();
  const health = new UpstreamHealth(store.upstreamHealth, config.upstreamHealth, logger);
  await health.start();
  billing.startSweeper();
  const providers = [...config.providers.values()];
  const sharedSecrets = providers.flatMap((p) => p.sharedKeys);
  const hosts = providers.map((p) => p.baseUrl);
  const rotation = new KeyRotation();
  const settlementRetries: SettlementRetries = new SettlementRetries(billing, logger);
  const pipeline: PipelineServices = {
    config,
    store,
    logger,
    authCache,
    billing,
    rotation,
    health,
    scrubber: createScrubber({ secrets: sharedSecrets, hosts }),
    upstreamKeys: new UpstreamKeyResolver(store, (own) => createScrubber({ secrets: [...sharedSecrets, ...own], hosts })),
    settlementRetries,
    metrics,
    tracing,
  };
  const ctx: RouteContext = { config, store, logger, billing, pipeline, media: { settings: mediaSettingsFromConfig(config.media) } };
  const server = buildServer(ctx, logger, ROUTES);
  let metricsListener: { server: Server; url: string } | null = null;
  if (metrics && config.metrics?.listen) metricsListener = await startMetricsListener(metrics, config.metrics.listen, logger);
  let closed = false;
  return {
    ctx,
    server,
    metricsUrl: metricsListener?.url ?? null,
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
      if (metricsListener) await new Promise((resolve) => metricsListener.server.close(resolve));
      await tracing?.shutdown().catch((err: unknown) => logger.warn({ err }, "exporting the last spans failed"));
      authCache.stop();
      health.stop();
      await billing.stopSweeper();
      await store.close();
      logDestination?.close();
    },
  };
}

/** Holds not yet settled or released, in the whole database (the gateway_holds_outstanding gauge). */
async function countHolds(store: Store): Promise<number> {
  const row = await store.handle.db
    .selectFrom("holds")
    .select((eb) => eb.fn.countAll<string | number | bigint>().as("n"))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
