// Google's long-running operations (Gemini API Veo): video models only.
import { googleOperationsAdapter } from "./videos.js";
import type { UpstreamDescriptor } from "../descriptor.js";
import { googleOperationsCapabilities } from "./capabilities.js";
import { sseDecoder } from "../sse-decoder.js";
import { authenticateGoogle } from "./authenticate.js";

export const googleOperationsUpstream: UpstreamDescriptor = {
  authenticate: authenticateGoogle,
  transport: null,
  streamDecoder: sseDecoder,
  chatPlan: null,
  nativePlans: {},
  // Operations report no token usage: a video is charged by its seconds (the video adapter reads them).
  readUsage: () => null,
  media: { videos: googleOperationsAdapter },
  capabilities: googleOperationsCapabilities,
  keyTest: null,
};
