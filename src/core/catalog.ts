// The catalog as the request path sees it: providers and models, typed and validated (load.ts
// builds it). A module of types only, so that the upstream descriptors (and the plans they wire)
// can name a model without importing the config loader, which imports the upstream capabilities.
import type { DimensionPriceField, TokenPriceField } from "./dimensions.js";
import type { Nano } from "./money.js";

export type ModelKind = "chat" | "image" | "video" | "embedding";
export type UpstreamApi = "chat" | "responses" | "images" | "videos";
/** Provider settings only some upstream types take (the type's capabilities list them). */
export type ProviderSetting = "api_version" | "region";

/**
 * The registered upstream types, one key per type. src/upstreams/capabilities.ts fills this
 * interface in (declaration merging), so that the type names come from that table alone and
 * this module still imports nothing from it; the registry's descriptors have the same keys.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by src/upstreams/capabilities.ts
export interface RegisteredUpstreamTypes {}

/** A registered upstream type: "openai", "anthropic", ... */
export type ProviderType = Extract<keyof RegisteredUpstreamTypes, string>;

export interface ProviderConfig {
  name: string;
  type: ProviderType;
  baseUrl: string;
  sharedKeys: string[];
  apis: ReadonlySet<UpstreamApi>;
  headers: Record<string, string>;
  timeoutMs: number;
  connectTimeoutMs: number;
  /** HTTP/1.1 connections per upstream origin (undici's pool size); HTTP/2 multiplexes streams on fewer. */
  maxConnections: number;
  /** How long a request may wait for a free connection before it fails (provider_error). */
  connectionWaitMs: number;
  /** Offer HTTP/2 (ALPN) on TLS connections; the upstream decides. */
  http2: boolean;
  /** The `api_version` setting as configured; absent when not set (the type applies its own default). */
  apiVersion?: string;
  /** The AWS region a signing type (bedrock) signs for: the `region` setting, else its base URL's; absent for other types. */
  region?: string;
}

/** The token prices, nano-USD per million tokens (so that sub-nano per-token prices stay exact). */
export type TokenPrices = { [F in TokenPriceField]: Nano };

/**
 * A model's prices, one field per dimension of src/core/dimensions.ts (config keys and defaults:
 * build-catalog.ts buildPricing, docs/configuration.md).
 */
export type ModelPricing = { [F in DimensionPriceField]: Nano } & {
  perImage: ReadonlyMap<string, Nano>;
  /** Token prices that replace the base ones when a request's input exceeds aboveInputTokens. */
  longContext?: LongContextTier;
};

export interface LongContextTier extends TokenPrices {
  /** The tier applies when the input (cached reads and cache writes included) is above this many tokens. */
  aboveInputTokens: number;
}

export interface ModelConfig {
  id: string;
  kind: ModelKind;
  provider: ProviderConfig;
  upstreamModel: string;
  contextWindow: number | null;
  maxOutputTokens: number | null;
  defaultOutputTokens: number;
  modalities: { input: string[]; output: string[] };
  /** The prompt_caching setting; absent means "auto". */
  promptCaching?: PromptCaching;
  pricing: ModelPricing;
  /** Tiers that include this model. */
  tiers: string[];
  /** A routing group's deployments and strategy; absent for the single-provider form (a group of one). */
  group?: RoutingGroup;
  /** Set on a deployment's view of the model: the deployment's public name. */
  deployment?: string;
  /**
   * Set on a tier's view of the model (price-factor.ts modelAtPriceFactor): the tier's price factor in
   * millionths, its prices already scaled by it; recorded in the ledger row. Absent: list prices.
   */
  priceFactorPpm?: number;
}

export type PromptCaching = "auto" | "off" | "forward";

export type RoutingStrategy = "ordered" | "weighted";

export interface RoutingGroup {
  strategy: RoutingStrategy;
  /** On a context-length error, fall over to a deployment with a larger context window. */
  contextFallback: boolean;
  /** In config order; at most 16 (Deployment.bit). */
  deployments: readonly Deployment[];
}

export interface Deployment {
  name: string;
  /**
   * The model as this deployment serves it: the group's id, tiers and limits with the deployment's
   * provider, upstream model, pricing and context window. Plans, holds and settlement take it as is.
   */
  model: ModelConfig;
  weight: number;
  /** Lower runs first. */
  priority: number;
  /** This deployment's bit in a set of deployments already tried. */
  bit: number;
  /** The circuit breaker's scope: "deployment:<model>/<name>". */
  breakerScope: string;
  /** Its active health probe (pipeline/health-probes.ts); absent: traffic alone judges it. */
  healthCheck?: { intervalMs: number; timeoutMs: number };
}
