// What a provider adapter is: how to address and authenticate one upstream API. Translation of
// bodies lives in src/formats; failover in src/pipeline. A new OpenAI-compatible vendor is config.
import type { ProviderConfig } from "../config/load.js";

export interface UpstreamTarget {
  url: string;
  headers: Record<string, string>;
}

export interface ProviderAdapter {
  /** The URL and headers for an API path (e.g. "/chat/completions", "/v1/messages") with one upstream key. */
  target(provider: ProviderConfig, path: string, key: string, clientHeaders: Record<string, string | string[] | undefined>): UpstreamTarget;
}
