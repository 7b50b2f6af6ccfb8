// `gateway serve`: migrate, bootstrap an empty database, listen, reload the config on SIGHUP, and
// shut down cleanly on SIGTERM. With --workers N (N > 1) the process is a supervisor (workers.ts)
// and each worker it forks runs serveWorker: the same server on the shared listening socket.
import cluster from "node:cluster";
import { createApp } from "../app.js";
import { bootstrapIfEmpty, type BootstrapResult } from "../accounts/bootstrap.js";
import { loadConfig, type GatewayConfig } from "../config/load.js";
import type { App } from "../app.js";
import type { ReloadOutcome } from "../http/route-context.js";
import { setFlagsFromString } from "node:v8";
import { tuneHeapForServing } from "./heap.js";
import type { CliIo } from "./io.js";
import { printStartBanner, SHUTDOWN_DEADLINE_MS, testHoldLiveness, WORKER_COUNT_VARIABLE, type PrimaryMessage, type WorkerMessage } from "./serve-common.js";
import { superviseWorkers } from "./workers.js";
import { WorkerMetricsLink } from "../observability/cluster-metrics.js";
import { RemoteSqliteBillingWrites } from "../billing/sqlite-billing-remote.js";
import { BILLING_WRITER_VARIABLE } from "./billing-writer-host.js";

export async function serve(config: GatewayConfig, io: CliIo, workers = 1): Promise<void> {
  // A forked worker runs the same command line: it serves; only the primary supervises.
  if (cluster.isWorker) return serveWorker(config, io);
  if (workers > 1) return superviseWorkers(config, io, workers);
  tuneHeapForServing(setFlagsFromString);
  // A reload reads the same file (GATEWAY_CONFIG or ./gateway.config.yaml) with the same environment.
  const holdLiveness = testHoldLiveness(io.env);
  const app = await createApp(config, { reload: () => loadConfig(io.env, io.cwd), ...(holdLiveness !== undefined && { holdLiveness }) });
  // From here on SIGHUP reloads (before, its default action would end the process).
  const onHangup = () => void reloadOnSignal(app, io);
  process.on("SIGHUP", onHangup);
  let first: BootstrapResult | null;
  let address: string;
  try {
    first = await bootstrapIfEmpty(app.ctx.store, config);
    address = await app.server.listen({ host: config.host, port: config.port });
  } catch (error) {
    // A failed start (port in use, ...) must not leave the database pool holding the process open.
    process.off("SIGHUP", onHangup);
    await app.close().catch(() => undefined);
    throw error;
  }
  printStartBanner(io, config, address, app.ctx.store.handle.description, first);
  await runUntilStopped(app, io, () => process.off("SIGHUP", onHangup));
}

/**
 * Serves until SIGTERM or SIGINT, then stops taking connections and waits for requests in flight.
 * A cluster worker (asWorker) stays quiet (the primary says it for all) and keeps draining through
 * further signals: a service manager or `timeout` signals the whole process group, and the primary
 * forwards its own, so a worker often gets two, and the second must not end it mid-drain.
 */
async function runUntilStopped(app: App, io: CliIo, onStopping: () => void, asWorker = false): Promise<void> {
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      onStopping();
      if (!asWorker) io.stderr(`${signal}: no new connections; waiting up to ${SHUTDOWN_DEADLINE_MS / 1000}s for requests in flight\n`);
      const deadline = setTimeout(() => {
        io.stderr("shutdown deadline reached; closing remaining connections\n");
        app.server.server.closeAllConnections();
      }, SHUTDOWN_DEADLINE_MS);
      deadline.unref();
      app
        .close()
        .catch((error: unknown) => io.stderr(`error during shutdown: ${(error as Error).message}\n`))
        .finally(() => {
          clearTimeout(deadline);
          app.ctx.logger.flush();
          resolve();
        });
    };
    if (asWorker) {
      // Left registered: the process exits once drained and out of the cluster.
      process.on("SIGTERM", () => stop("SIGTERM"));
      process.on("SIGINT", () => stop("SIGINT"));
    } else {
      process.once("SIGTERM", () => stop("SIGTERM"));
      process.once("SIGINT", () => stop("SIGINT"));
    }
  });
}

/**
 * A cluster worker: the primary has migrated and bootstrapped the database and prints the banner;
 * the worker serves, reloads when the primary asks (SIGHUP goes to the primary) and drains on SIGTERM.
 */
async function serveWorker(config: GatewayConfig, io: CliIo): Promise<void> {
  const worker = cluster.worker!;
  tuneHeapForServing(setFlagsFromString);
  // A scrape reports every worker: the primary collects their registries (observability/cluster-metrics.ts).
  // Answered until the worker exits, draining included: its counters belong in the server's.
  const metricsLink = new WorkerMetricsLink(worker.id, send);
  worker.on("message", (message: PrimaryMessage) => metricsLink.onMessage(message ?? {}));
  const billingWrites = process.env[BILLING_WRITER_VARIABLE] === "primary" ? remoteBillingWrites(worker) : undefined;
  const holdLiveness = testHoldLiveness(io.env);
  const app = await createApp(config, {
    ...(holdLiveness !== undefined && { holdLiveness }),
    ...(billingWrites !== undefined && { sqliteBillingWrites: billingWrites }),
    reload: () => loadConfig(io.env, io.cwd),
    logFields: { worker: worker.id },
    sharedStdout: true,
    clusterMetrics: metricsLink,
    workers: Number(process.env[WORKER_COUNT_VARIABLE]) || 1,
  });
  // The admin API's reload reaches one worker: once it has swapped (and recorded) it, the primary
  // has the others follow, so that every worker serves the same file.
  const reloadThisWorker = app.ctx.reloadConfig.bind(app.ctx);
  app.ctx.reloadConfig = async (actor, options) => {
    const outcome = await reloadThisWorker(actor, options);
    if (outcome.status === "reloaded" && options?.audit !== false) send({ type: "reload-peers", version: outcome.version });
    return outcome;
  };
  // A hangup of the terminal reaches every process of the group: the primary's forwarded reload is the one that counts.
  const ignoreHangup = () => undefined;
  process.on("SIGHUP", ignoreHangup);
  const onMessage = (message: PrimaryMessage) => {
    if (message?.type !== "reload") return;
    const actor = { type: "cli" as const, id: null, name: "SIGHUP", clientAddress: null, requestId: null };
    void reloadThisWorker(actor, { audit: message.audit }).then(
      (outcome) => send({ type: "reloaded", sequence: message.sequence, status: outcome.status, text: describeReload(outcome) }),
      (error: unknown) =>
        send({ type: "reloaded", sequence: message.sequence, status: "failed", text: `config reload failed, the running config stays: ${(error as Error).message}` }),
    );
  };
  worker.on("message", onMessage);
  let address: string;
  try {
    address = await app.server.listen({ host: config.host, port: config.port });
  } catch (error) {
    worker.off("message", onMessage);
    await app.close().catch(() => undefined);
    throw error;
  }
  send({ type: "listening", address });
  await runUntilStopped(app, io, () => worker.off("message", onMessage), true);
}

/** The billing writes committed by the primary (decision 0047): requests out, answers in, all failing once the channel closes. */
function remoteBillingWrites(worker: NonNullable<typeof cluster.worker>): RemoteSqliteBillingWrites {
  const writes = new RemoteSqliteBillingWrites((batch, failed) => {
    if (!process.connected) return failed();
    process.send!(batch, undefined, {}, (error: Error | null) => error && failed());
  });
  worker.on("message", (message: PrimaryMessage) => message?.type === "billing-answers" && writes.onAnswers(message));
  process.once("disconnect", () => writes.close());
  return writes;
}

function send(message: WorkerMessage): void {
  process.send?.(message);
}

/** SIGHUP: the reload's outcome on stderr (and in the JSON log); a refused reload leaves the running config serving. */
async function reloadOnSignal(app: App, io: CliIo): Promise<void> {
  // The audit log's actor: the operating system's signal, under the CLI's actor type (who sent it is not known).
  const actor = { type: "cli" as const, id: null, name: "SIGHUP", clientAddress: null, requestId: null };
  try {
    io.stderr(`SIGHUP: ${describeReload(await app.reloadConfig(actor))}\n`);
  } catch (error) {
    io.stderr(`SIGHUP: config reload failed, the running config stays: ${(error as Error).message}\n`);
  }
}

/** A reload's outcome in one line (after "SIGHUP: "). */
export function describeReload(outcome: ReloadOutcome): string {
  if (outcome.status === "refused") return `config reload refused, the running config (${outcome.version.slice(0, 12)}) stays: ${outcome.message}`;
  if (outcome.status === "unchanged") return `config unchanged (${outcome.version.slice(0, 12)})`;
  const c = outcome.changes;
  return `config reloaded: ${outcome.previousVersion.slice(0, 12)} -> ${outcome.version.slice(0, 12)} (models +${c.modelsAdded.length} -${c.modelsRemoved.length} ~${c.modelsChanged.length}, providers +${c.providersAdded.length} -${c.providersRemoved.length} ~${c.providersChanged.length})`;
}
