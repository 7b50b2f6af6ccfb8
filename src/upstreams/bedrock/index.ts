// AWS Bedrock Runtime through its Converse API: Chat (and Messages and Responses, over Chat) is
// translated to Converse and back; streams come as the binary AWS event stream. Requests are
// signed with SigV4 from a key "ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]" for the
// provider's region.
import { chatToBedrockConverse, usageFromConverse } from "./chat-plan.js";
import type { ConverseUsage } from "./translators.js";
import { type UpstreamDescriptor, ONE_TOKEN_CHAT } from "../descriptor.js";
import { bedrockCapabilities } from "./capabilities.js";
import { signBedrockRequest } from "./authenticate.js";
import { eventStreamDecoder } from "./event-stream-decoder.js";

export const bedrockUpstream: UpstreamDescriptor = {
  authenticate: signBedrockRequest,
  transport: null,
  streamDecoder: eventStreamDecoder,
  chatPlan: chatToBedrockConverse,
  nativePlans: {},
  readUsage: (reported) => usageFromConverse(reported as ConverseUsage | null | undefined),
  media: {},
  capabilities: bedrockCapabilities,
  keyTest: ONE_TOKEN_CHAT,
};
