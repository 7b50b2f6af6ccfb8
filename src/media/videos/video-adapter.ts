// The boundary between the gateway's video tasks and one asynchronous upstream style. An adapter
// knows how to submit, poll and download for one API shape; everything else (billing, task rows,
// rate limiting, failover) is shared. Adding a provider style is one more file and one more case.
import type { ProviderConfig } from "../../config/load.js";
import { GatewayError } from "../../errors/catalogue.js";
import { googleOperationsAdapter } from "./google-operations.js";
import { openaiVideosAdapter } from "./openai-videos.js";
import type { VideoAdapter } from "./video-types.js";

export type { UpstreamVideoState, VideoAdapter, VideoSubmission } from "./video-types.js";

export function videoAdapterFor(provider: ProviderConfig): VideoAdapter {
  switch (provider.type) {
    case "openai":
      return openaiVideosAdapter;
    case "google-operations":
      return googleOperationsAdapter;
    default:
      throw new GatewayError("provider_error", `The provider ${provider.name} has no video API.`);
  }
}
