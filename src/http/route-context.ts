// What every route family receives from the composition root (app.ts builds it). Defined from
// lower-level types only, so route modules depend on this and not on app.ts, which imports them.
import type { Logger } from "pino";
import type { StoreBilling } from "../billing/billing-store.js";
import type { ReloadChanges } from "../config/config-diff.js";
import type { GatewayConfig } from "../config/load.js";
import type { LiveCatalog } from "../config/live-catalog.js";
import type { MediaSettings } from "../config/media-settings.js";
import type { PipelineServices } from "../pipeline/services.js";
import type { AuditActor } from "../store/audit-store.js";
import type { Store } from "../store/index.js";

export interface MediaContext {
  /** Read on every use: tests (and an operator's tooling) may change them on a running gateway. */
  settings: MediaSettings;
}

/**
 * One loaded config with everything derived from it (catalog, providers, tiers, limits, scrubbers,
 * media settings): what a request sees from its start to its end, whatever reloads meanwhile
 * (decision 0021). Never changed once built; a reload builds a new one.
 */
export interface ConfigSnapshot {
  readonly config: GatewayConfig;
  /** The pipeline's services with this config's scrubbers and key resolver (the shared state is the same objects in every snapshot). */
  readonly pipeline: PipelineServices;
  readonly media: MediaContext;
  /** When this config was loaded (epoch ms). */
  readonly loadedAt: number;
}

/** The config serving new requests; swapped whole by a reload (one property write). */
export interface LiveConfig {
  readonly current: ConfigSnapshot;
}

/** What a reload did: the new config swapped in, the same file again, or refused with the precise reason. */
export type ReloadOutcome =
  | { status: "reloaded"; version: string; previousVersion: string; loadedAt: number; changes: ReloadChanges }
  | { status: "unchanged"; version: string; loadedAt: number }
  | { status: "refused"; message: string; version: string; loadedAt: number };

declare module "fastify" {
  interface FastifyRequest {
    /** The config snapshot this request runs on, taken when it arrived (server.ts). */
    snapshot: ConfigSnapshot;
  }
}

export interface RouteContext {
  live: LiveConfig;
  /** The current snapshot's config, for what runs outside a request; a request reads request.snapshot. */
  readonly config: GatewayConfig;
  /** The current snapshot's services, for what runs outside a request; a request reads request.snapshot. */
  readonly pipeline: PipelineServices;
  /** The current snapshot's media settings. */
  readonly media: MediaContext;
  store: Store;
  logger: Logger;
  billing: StoreBilling;
  /** The catalog's versions, changes and provider keys (catalog.source: database; read-only from a file). */
  catalog: LiveCatalog;
  /** Re-reads and validates the config file and swaps it in when valid (one reload at a time). */
  reloadConfig(actor: AuditActor, options?: ReloadOptions): Promise<ReloadOutcome>;
}

export interface ReloadOptions {
  /** false: swap in without an audit row (a cluster worker following the reload another worker recorded). */
  audit?: boolean;
}
