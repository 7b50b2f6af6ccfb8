// `gateway serve`: migrate, bootstrap an empty database, listen, and shut down cleanly on SIGTERM.
import { createApp } from "../app.js";
import { bootstrapIfEmpty, type BootstrapResult } from "../accounts/bootstrap.js";
import type { GatewayConfig } from "../config/load.js";
import { setFlagsFromString } from "node:v8";
import { tuneHeapForServing } from "./heap.js";
import type { CliIo } from "./io.js";
import { firstStartMessage } from "./first-start.js";
import { upstreamOf } from "../upstreams/registry.js";

const SHUTDOWN_DEADLINE_MS = 30_000;

export async function serve(config: GatewayConfig, io: CliIo): Promise<void> {
  tuneHeapForServing(setFlagsFromString);
  const app = await createApp(config);
  let first: BootstrapResult | null;
  let address: string;
  try {
    first = await bootstrapIfEmpty(app.ctx.store, config);
    address = await app.server.listen({ host: config.host, port: config.port });
  } catch (error) {
    // A failed start (port in use, ...) must not leave the database pool holding the process open.
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
