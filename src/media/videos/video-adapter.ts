// The boundary between the gateway's video tasks and one asynchronous upstream style. An adapter
// knows how to submit, poll and download for one API shape; everything else (billing, task rows,
// rate limiting, failover) is shared. Which adapter a provider uses is its upstream descriptor's
// media.videos (src/upstreams/).
import type { ProviderConfig } from "../../core/catalog.js";
import { GatewayError } from "../../errors/catalogue.js";
import { upstreamOf } from "../../upstreams/registry.js";
import type { VideoAdapter } from "../../upstreams/video-adapter.js";

export type { UpstreamVideoState, VideoAdapter, VideoSubmission } from "../../upstreams/video-adapter.js";

export function videoAdapterFor(provider: ProviderConfig): VideoAdapter {
  const adapter = upstreamOf(provider).media.videos;
  if (!adapter) throw new GatewayError("provider_error", `The provider ${provider.name} has no video API.`);
  return adapter;
}
