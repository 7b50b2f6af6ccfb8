// What every route family receives from the composition root (app.ts builds it). Defined from
// lower-level types only, so route modules depend on this and not on app.ts, which imports them.
import type { Logger } from "pino";
import type { StoreBilling } from "../billing/billing-store.js";
import type { GatewayConfig } from "../config/load.js";
import type { MediaSettings } from "../media/settings.js";
import type { PipelineServices } from "../pipeline/services.js";
import type { Store } from "../store/index.js";

export interface MediaContext {
  /** Read on every use: tests (and an operator's tooling) may change them on a running gateway. */
  settings: MediaSettings;
}

export interface RouteContext {
  config: GatewayConfig;
  store: Store;
  logger: Logger;
  billing: StoreBilling;
  pipeline: PipelineServices;
  media: MediaContext;
}
