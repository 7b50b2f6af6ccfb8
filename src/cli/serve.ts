// `gateway serve`: migrate, bootstrap an empty database, listen, reload the config on SIGHUP, and
// shut down cleanly on SIGTERM.
import { createApp } from "../app.js";
import { bootstrapIfEmpty, type BootstrapResult } from "../accounts/bootstrap.js";
import { loadConfig, type GatewayConfig } from "../config/load.js";
import type { App } from "../app.js";
import { setFlagsFromString } from "node:v8";
import { tuneHeapForServing } from "./heap.js";
import type { CliIo } from "./io.js";
import { firstStartMessage } from "./first-start.js";
import { upstreamOf } from "../upstreams/registry.js";

const SHUTDOWN_DEADLINE_MS = 30_000;

export async function serve(config: GatewayConfig, io: CliIo): Promise<void> {
  tuneHeapForServing(setFlagsFromString);
  // A reload reads the same file (GATEWAY_CONFIG or ./gateway.config.yaml) with the same environment.
  const app = await createApp(config, { reload: () => loadConfig(io.env, io.cwd) });
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
  io.stderr(`model-gateway listening on ${address} (${app.ctx.store.handle.description})\n`);
  const demoModels = [...config.models.values()].filter((m) => upstreamOf(m.provider).capabilities.demo).map((m) => m.id);
  if (!config.sourcePath) {
    io.stderr(
      `No config file: serving the built-in demo models (${demoModels.join(", ")}), made-up answers with no provider key. Copy gateway.config.example.yaml to gateway.config.yaml (or set GATEWAY_CONFIG) to add providers and models.\n`,
    );
  } else {
    io.stderr(`config: ${config.sourcePath} (${config.providers.size} providers, ${config.models.size} models)\n`);
  }
  if (first) io.stderr(firstStartMessage(address, first));
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      process.off("SIGHUP", onHangup);
      io.stderr(`${signal}: no new connections; waiting up to ${SHUTDOWN_DEADLINE_MS / 1000}s for requests in flight\n`);
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
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
}

/** SIGHUP: the reload's outcome on stderr (and in the JSON log); a refused reload leaves the running config serving. */
async function reloadOnSignal(app: App, io: CliIo): Promise<void> {
  // The audit log's actor: the operating system's signal, under the CLI's actor type (who sent it is not known).
  const actor = { type: "cli" as const, id: null, name: "SIGHUP", clientAddress: null, requestId: null };
  try {
    const outcome = await app.reloadConfig(actor);
    if (outcome.status === "refused") io.stderr(`SIGHUP: config reload refused, the running config (${outcome.version.slice(0, 12)}) stays: ${outcome.message}\n`);
    else if (outcome.status === "unchanged") io.stderr(`SIGHUP: config unchanged (${outcome.version.slice(0, 12)})\n`);
    else {
      const c = outcome.changes;
      io.stderr(
        `SIGHUP: config reloaded: ${outcome.previousVersion.slice(0, 12)} -> ${outcome.version.slice(0, 12)} (models +${c.modelsAdded.length} -${c.modelsRemoved.length} ~${c.modelsChanged.length}, providers +${c.providersAdded.length} -${c.providersRemoved.length} ~${c.providersChanged.length})\n`,
      );
    }
  } catch (error) {
    io.stderr(`SIGHUP: config reload failed, the running config stays: ${(error as Error).message}\n`);
  }
}
