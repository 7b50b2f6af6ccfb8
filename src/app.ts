// The composition root: config -> store -> services -> server. Everything a request needs is
// built here, per config snapshot (rebuilt by a reload, decision 0021); the request path reads no
// config file and parses nothing but its own body.
import pino, { type Logger } from "pino";
import type { FastifyInstance } from "fastify";
import { registerAdminApiRoutes } from "./admin/index.js";
import { StoreBilling } from "./billing/billing-store.js";
import type { SqliteBillingWrites } from "./billing/sqlite-billing-writes.js";
import { configChanges } from "./config/config-diff.js";
import { ConfigError, restartOnlyChanges, type GatewayConfig } from "./config/load.js";
import { registerDashboardRoutes } from "./dashboard/index.js";
import { resolveServerSecret } from "./config/server-secret.js";
import { BlockLogDestination } from "./core/log-destination.js";
import type { ConfigSnapshot, ReloadOptions, ReloadOutcome, RouteContext } from "./http/route-context.js";
import { registerAccountRoutes } from "./http/routes/account.js";
import { registerGatewayRoutes } from "./http/routes/gateway.js";
import { registerHealthRoutes } from "./http/routes/health.js";
import { registerModelRoutes } from "./http/routes/models.js";
import { registerStripeWebhookRoutes } from "./http/routes/stripe-webhook.js";
import { buildServer, type RouteRegistrar } from "./http/server.js";
import { registerMediaRoutes } from "./media/register-media-routes.js";
import { registerMcpRoutes } from "./mcp/routes.js";
import { mediaSettingsFromConfig } from "./config/media-settings.js";
import { AuthCache } from "./pipeline/auth-cache.js";
import { KeyRotation } from "./pipeline/failover.js";
import { createScrubber } from "./pipeline/scrub.js";
import type { PipelineServices } from "./pipeline/services.js";
import { SettlementRetries } from "./pipeline/settlement-retries.js";
import { UpstreamKeyResolver } from "./pipeline/upstream-key-resolver.js";
import { RefusedKeys } from "./pipeline/refused-keys.js";
import { HealthProbes } from "./pipeline/health-probes.js";
import { lastLedgerVerify, startAlerting, type Alerting } from "./pipeline/alerts/alerting.js";
import { openStore, type Store } from "./store/index.js";
import { watchCatalog, type CatalogWatch } from "./store/catalog-watch.js";
import { configFromDatabase, LiveCatalog } from "./config/live-catalog.js";
import { disabledFileKeys } from "./config/file-keys.js";
import type { AuditActor } from "./store/audit-store.js";
import { UpstreamHealth } from "./upstreams/upstream-health.js";
import { upstreamRequestsWaiting } from "./upstreams/upstream-pools.js";
import type { GatewayMetrics } from "./observability/metrics.js";
import type { WorkerMetricsLink } from "./observability/cluster-metrics.js";
import { registerMetricsRoutes, startMetricsListener } from "./http/routes/metrics.js";
import { registerOpenApiRoutes } from "./openapi/routes.js";
import type { Tracing } from "./observability/tracing.js";
import { RequestLog } from "./requestlog/request-log.js";
import { openResponseCache } from "./pipeline/response-cache/open.js";
import type { Server } from "node:http";

export interface App {
  ctx: RouteContext;
  /** Re-reads the config (createApp's `reload` option) and swaps it in when valid; SIGHUP and the admin API call it. */
  reloadConfig(actor: AuditActor, options?: ReloadOptions): Promise<ReloadOutcome>;
  server: FastifyInstance;
  /** The separate metrics listener's URL (metrics.listen), null when there is none. */
  metricsUrl: string | null;
  /** The active health probes: run by the one process of the gateway holding their lease. */
  probes: HealthProbes;
  /** Alerts' dispatcher, threshold watcher and scheduled jobs (ADR 0040). */
  alerting: Alerting;
  close(): Promise<void>;
}

/** Every route family the server registers (exported so tests can enumerate the real routes). */
export const ROUTES: readonly RouteRegistrar[] = [
  registerHealthRoutes,
  registerModelRoutes,
  registerAccountRoutes,
  registerGatewayRoutes,
  registerMediaRoutes,
  registerStripeWebhookRoutes,
  registerMcpRoutes,
  registerDashboardRoutes,
  registerAdminApiRoutes,
  registerMetricsRoutes,
  registerOpenApiRoutes,
];

/**
 * One JSON line per request, written to stdout in blocks (core/log-destination.ts): a write per
 * line cost a thread-pool round trip and a wake-up of the event loop per request (~50 µs of CPU per
 * request at 1,000 req/s, and a thread competing with the event loop for the cores; bench/results/history/2026-11-23T1215-third-round.md).
 */
export function createLogger(level: string, destination: BlockLogDestination, fields?: Record<string, string | number>): Logger {
  return pino({ level, base: fields ?? undefined, timestamp: pino.stdTimeFunctions.isoTime }, destination);
}

export interface AppOptions {
  logger?: Logger;
  now?: () => number;
  traceExportDelayMs?: number;
  /** Loads the config again for a reload (`gateway serve`: the same file and environment); without it a reload is refused. */
  reload?: () => GatewayConfig;
  /** Fields on every log line (`gateway serve --workers N`: the worker's id). */
  logFields?: Record<string, string | number>;
  /**
   * Several processes write the log to one inherited stdout (cluster workers): each write then ends
   * at a line and stays within PIPE_BUF, so the kernel never interleaves two processes' lines.
   */
  sharedStdout?: boolean;
  /** A cluster worker's link to the primary: a scrape then reports every worker (cluster-metrics.ts). */
  clusterMetrics?: WorkerMetricsLink;
  /** SQLite: the billing writes committed by another process (a cluster worker's link to the primary, decision 0047); default: this process's own writer. */
  sqliteBillingWrites?: SqliteBillingWrites;
  /** The processes of this `gateway serve` sharing the port (`--workers N`): each takes an equal share of server.max_connections. */
  workers?: number;
  /**
   * Tests only: the liveness lease of this process (ms, renewed every third) and the hold sweeper's
   * interval, shortened so that a killed process's holds come back within seconds (ADR 0054).
   */
  holdLiveness?: { ttlMs: number; sweepIntervalMs: number };
}

/** How often a process reads the catalog's head serial (on PostgreSQL NOTIFY usually comes first). */
const CATALOG_POLL_MS = 250;

export async function createApp(config: GatewayConfig, options: AppOptions = {}): Promise<App> {
  const logDestination = options.logger ? null : new BlockLogDestination(process.stdout.fd, options.sharedStdout ? { atomicLineWrites: true } : {});
  const logger = options.logger ?? createLogger(config.logLevel, logDestination!, options.logFields);
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    sqlitePath: config.sqlitePath,
    secret: resolveServerSecret(config),
    ledgerSecret: config.ledgerSecret,
    ledgerWriter: true,
    timeouts: config.databaseTimeouts,
    backgroundCheckpoints: { onError: (message) => logger.warn({ err: message }, "SQLite background checkpoint failed") },
  });
  if (store.newerMigrations.length > 0) {
    logger.warn({ migrations: store.newerMigrations }, "the database was migrated by a later release; serving on it as the previous release (docs/operations.md#upgrading)");
  }
  // The gateway's clock (epoch ms): billing's months, holds and periodic budgets, and key expiry; tests inject one.
  const now = options.now ?? Date.now;
  // Built before billing, whose write batches it times; its gauges read services built below, when scraped.
  // prom-client and the OpenTelemetry SDK are loaded only when configured: a gateway without them
  // neither loads nor starts them (decision 0018).
  const metrics: GatewayMetrics | null = config.metrics
    ? new (await import("./observability/metrics.js")).GatewayMetrics(
        config.metrics,
        {
          breakerStates: () => health.stateCounts(),
          keysCoolingDown: (): number => rotation.coolingDown(),
          settlementRetriesPending: (): number => settlementRetries.pending,
          upstreamRequestsWaiting,
          holdsOutstanding: async () => countHolds(store),
          // Only with the request log on: no series for a log that is not there.
          ...(config.requestLog && { requestLogDropped: (): number => requestLog?.droppedTotal ?? 0 }),
          responseCacheEvents: () => responseCache.counts(),
        },
        options.clusterMetrics && (() => options.clusterMetrics!.exposeAll()),
      )
    : null;
  if (options.clusterMetrics && metrics) options.clusterMetrics.registry = metrics.registry;
  if (metrics) (await import("./observability/ledger-verify-metrics.js")).registerLedgerVerifyMetrics(metrics.registry, () => lastLedgerVerify(store));
  const dialect = store.handle.dialect;
  // Written behind the request path (ADR 0023): the request path only appends to its buffer.
  const requestLog: RequestLog | null = config.requestLog ? new RequestLog(store.handle, config.requestLog, logger, now) : null;
  requestLog?.start();
  const billing: StoreBilling = new StoreBilling(store.handle, {
    now,
    onSweepError: (err) => logger.warn({ err }, "hold sweep failed"),
    onBatch: metrics ? (seconds) => metrics.observeBatch(dialect, seconds) : undefined,
    ...(options.sqliteBillingWrites !== undefined && { sqliteWrites: options.sqliteBillingWrites }),
    escrow: config.balanceEscrow === true && dialect === "postgres" ? {} : undefined,
  });
  const tracing: Tracing | null = config.tracing
    ? new (await import("./observability/tracing.js")).Tracing(config.tracing, options.traceExportDelayMs === undefined ? {} : { exportDelayMs: options.traceExportDelayMs })
    : null;
  const authCache = new AuthCache(store, now);
  await authCache.start();
  const health = new UpstreamHealth(store.upstreamHealth, config.upstreamHealth, logger);
  await health.start();
  // Before serving: a hold may name this process only once its liveness row exists (process-liveness.ts).
  await billing.startLiveness(options.holdLiveness === undefined ? {} : { ttlMs: options.holdLiveness.ttlMs });
  billing.startSweeper(options.holdLiveness?.sweepIntervalMs);
  const rotation = new KeyRotation();
  const settlementRetries: SettlementRetries = new SettlementRetries(billing, logger);
  const responseCache = await openResponseCache(config, store, logger);
  // Alerts (ADR 0040): settlements are followed by a threshold check off the request path.
  let servedConfig = (): GatewayConfig => config;
  const alerting = await startAlerting({ store, logger, config: () => servedConfig(), health, clock: now });
  // The services every snapshot shares: breakers, key cooldowns, caches and billing outlive a reload.
  const shared = { store, logger, authCache, billing, rotation, health, settlementRetries, metrics, tracing, requestLog, responseCache };
  // `disabledKeys`: the config file's keys disabled now (catalog.source: file; config/file-keys.ts).
  const snapshotOf = (loaded: GatewayConfig, disabledKeys: readonly string[]): ConfigSnapshot => {
    const providers = [...loaded.providers.values()];
    const sharedSecrets = providers.flatMap((p) => p.sharedKeys);
    const hosts = providers.map((p) => p.baseUrl);
    const pipeline: PipelineServices = {
      ...shared,
      billing: alerting.watched(billing),
      config: loaded,
      scrubber: createScrubber({ secrets: sharedSecrets, hosts }),
      upstreamKeys: new UpstreamKeyResolver(store, (own) => createScrubber({ secrets: [...sharedSecrets, ...own], hosts })),
      refusedKeys: new RefusedKeys(
        (provider, key, status) => ctx.catalog.disableRefusedKey(provider, key, status),
        (err) => logger.error({ err }, "disabling a refused provider key failed"),
        disabledKeys,
      ),
    };
    return { config: loaded, pipeline, media: { settings: mediaSettingsFromConfig(loaded.media) }, loadedAt: Date.now() };
  };
  // The catalog from the database (catalog.source: database), seeded from the file on a first start.
  const gatewayActor: AuditActor = { type: "cli", id: null, name: "gateway serve", clientAddress: null, requestId: null };
  const withCatalog = (loaded: GatewayConfig): Promise<GatewayConfig> | GatewayConfig =>
    loaded.catalogSource === "database" ? configFromDatabase(store, loaded, gatewayActor) : loaded;
  const snapshotFor = async (loaded: GatewayConfig): Promise<ConfigSnapshot> => snapshotOf(loaded, await disabledFileKeys(store, loaded));
  const live = { current: await snapshotFor(await withCatalog(config)) };
  servedConfig = () => live.current.config;
  let reloading: Promise<unknown> = Promise.resolve();
  const reloadConfig = (actor: AuditActor, reloadOptions: ReloadOptions = {}): Promise<ReloadOutcome> => {
    // One reload at a time: two at once could swap in the older file last.
    const next = reloading.then(() => reloadOnce(actor, reloadOptions.audit !== false));
    reloading = next.catch(() => undefined);
    return next;
  };
  const reloadOnce = async (actor: AuditActor, audit: boolean): Promise<ReloadOutcome> => {
    const running = live.current;
    const refuse = (message: string): ReloadOutcome => {
      logger.error({ config_version: running.config.version, reason: message }, "config reload refused; the running config stays");
      return { status: "refused", message, version: running.config.version, loadedAt: running.loadedAt };
    };
    if (!options.reload) return refuse("this gateway was started without a config file loader; restart it to change its config");
    let loaded: GatewayConfig;
    try {
      loaded = await withCatalog(options.reload());
    } catch (error) {
      if (error instanceof ConfigError) return refuse(error.message);
      throw error;
    }
    const needsRestart = restartOnlyChanges(running.config, loaded);
    if (needsRestart.length > 0) {
      return refuse(
        `${loaded.sourcePath ?? "(defaults)"}: ${needsRestart.join(", ")}: changed; needs a restart (a reload cannot change ${needsRestart.length === 1 ? "it" : "them"})`,
      );
    }
    if (loaded.version === running.config.version && loaded.sourcePath === running.config.sourcePath) {
      return { status: "unchanged", version: running.config.version, loadedAt: running.loadedAt };
    }
    const snapshot = await snapshotFor(loaded);
    const changes = configChanges(running.config, loaded);
    // Recorded before the swap: a reload the audit log cannot record does not happen. Under
    // `--workers N` one worker records the operator's reload and the others follow it unrecorded.
    if (audit)
      await store.audited(actor, (tx) =>
        tx.record({
          action: "config.reload",
          targetType: "config",
          targetId: loaded.sourcePath ?? "(defaults)",
          before: { version: running.config.version },
          after: { version: loaded.version, ...changesAuditFields(changes) },
        }),
      );
    live.current = snapshot;
    logger.info({ config_version: loaded.version, previous_config_version: running.config.version, ...changesAuditFields(changes) }, "config reloaded");
    return { status: "reloaded", version: loaded.version, previousVersion: running.config.version, loadedAt: snapshot.loadedAt, changes };
  };
  // A catalog change (here, in another worker or another process) swaps in a snapshot with the
  // running file's settings and the latest catalog; in the queue of reloads like a file reload.
  const reloadCatalog = (): Promise<void> => {
    const next = reloading.then(async () => {
      const running = live.current;
      if (running.config.catalogSource === "file") {
        // The file's catalog stays; which of its keys are disabled changed (or nothing did).
        const disabled = await disabledFileKeys(store, running.config);
        if ([...new Set(disabled)].sort().join("\n") === running.pipeline.refusedKeys.disabledAtStart.join("\n")) return;
        live.current = snapshotOf(running.config, disabled);
        logger.info({ config_version: running.config.version, disabled_file_keys: disabled.length }, "provider key states changed");
        return;
      }
      let loaded: GatewayConfig;
      try {
        loaded = await configFromDatabase(store, running.config, gatewayActor);
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        // Every version was checked when written; one that no longer builds is logged, not served.
        logger.error({ config_version: running.config.version, reason: error.message }, "catalog version refused; the running catalog stays");
        return;
      }
      if (loaded.version === running.config.version) return;
      const changes = configChanges(running.config, loaded);
      live.current = snapshotOf(loaded, []);
      logger.info({ config_version: loaded.version, previous_config_version: running.config.version, ...changesAuditFields(changes) }, "catalog reloaded");
    });
    reloading = next.catch(() => undefined);
    return next;
  };
  // Also with catalog.source: file: the file's keys are disabled and enabled through the database.
  const catalogWatch: CatalogWatch = await watchCatalog(store.handle, store.catalog, reloadCatalog, {
    pollMs: CATALOG_POLL_MS,
    onError: (err) => logger.warn({ err }, "watching the catalog failed"),
  });
  const ctx: RouteContext = {
    live,
    get config() {
      return live.current.config;
    },
    get pipeline() {
      return live.current.pipeline;
    },
    get media() {
      return live.current.media;
    },
    store,
    logger,
    billing,
    reloadConfig,
    // A change is committed before this process swaps it in: a failed swap is logged and left to the
    // watch's next read, never answered as a failed change.
    catalog: new LiveCatalog(
      store,
      () => live.current.config,
      () => reloadCatalog().catch((err: unknown) => logger.warn({ err }, "serving the new catalog failed; the watch retries")),
    ),
  };
  const probes = new HealthProbes({
    store,
    health,
    logger,
    config: () => live.current.config,
    usableKeys: (provider) => live.current.pipeline.refusedKeys.usable(provider.sharedKeys),
    onRefused: async (provider, key, status) => void live.current.pipeline.refusedKeys.refuse(provider, key, status),
    clock: now,
  });
  probes.start();
  const server = buildServer(ctx, logger, ROUTES, options.workers ?? 1);
  let metricsListener: { server: Server; url: string } | null = null;
  if (metrics && config.metrics?.listen) metricsListener = await startMetricsListener(metrics, config.metrics.listen, logger);
  let closed = false;
  return {
    ctx,
    reloadConfig,
    server,
    metricsUrl: metricsListener?.url ?? null,
    probes,
    alerting,
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
      await probes.stop();
      await alerting.stop();
      await catalogWatch.stop();
      // After the server: every request it answered has been appended; before the store closes.
      await requestLog?.close();
      if (metricsListener) await new Promise((resolve) => metricsListener.server.close(resolve));
      await tracing?.shutdown().catch((err: unknown) => logger.warn({ err }, "exporting the last spans failed"));
      authCache.stop();
      health.stop();
      // After the server: no request is in flight, so every balance slice goes back whole, and the
      // liveness row goes only after the holds that name this process.
      await billing.close();
      await responseCache.close();
      await store.close();
      logDestination?.close();
    },
  };
}

/** The audit row's and log line's fields of a reload's changes (names only). */
function changesAuditFields(changes: ReturnType<typeof configChanges>): Record<string, string[]> {
  return {
    models_added: changes.modelsAdded,
    models_removed: changes.modelsRemoved,
    models_changed: changes.modelsChanged,
    providers_added: changes.providersAdded,
    providers_removed: changes.providersRemoved,
    providers_changed: changes.providersChanged,
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
