// The composition root: config -> store -> server. Everything a request needs is built here once.
import pino, { type Logger } from "pino";
import type { FastifyInstance } from "fastify";
import type { GatewayConfig } from "./config/load.js";
import { resolveServerSecret } from "./config/server-secret.js";
import { registerHealthRoutes } from "./http/routes/health.js";
import { buildServer, type RouteRegistrar } from "./http/server.js";
import { openStore, type Store } from "./store/index.js";

export interface AppContext {
  config: GatewayConfig;
  store: Store;
  logger: Logger;
}

export interface App {
  ctx: AppContext;
  server: FastifyInstance;
  close(): Promise<void>;
}

const ROUTES: readonly RouteRegistrar[] = [registerHealthRoutes];

export function createLogger(level: string): Logger {
  return pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ sync: false }));
}

export async function createApp(config: GatewayConfig, options: { logger?: Logger } = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const store = await openStore({ databaseUrl: config.databaseUrl, sqlitePath: config.sqlitePath, secret: resolveServerSecret(config) });
  const ctx: AppContext = { config, store, logger };
  const server = buildServer(ctx, logger, ROUTES);
  let closed = false;
  return {
    ctx,
    server,
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
      await store.close();
    },
  };
}
