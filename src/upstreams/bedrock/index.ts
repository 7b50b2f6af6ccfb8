// AWS Bedrock Runtime through its Converse API: Chat (and Messages and Responses, over Chat) is
// translated to Converse and back; streams come as the binary AWS event stream. Requests are
// signed with SigV4 from a key "ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]" for the
// provider's region.
import { chatToBedrockConverse, usageFromConverse } from "./chat-plan.js";
import type { ConverseUsage } from "./translators.js";
import type { UpstreamDescriptor } from "../descriptor.js";
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
  capabilities: {
    kinds: ["chat"],
    // `apis` names OpenAI APIs; Bedrock speaks none of them.
    apis: [],
    defaultApis: [],
    // Claude models take it as thinking (additionalModelRequestFields); for others it is dropped with a warning.
    chatReasoningEffort: true,
    honorsOutputLimit: true,
    providerSettings: ["region"],
    demo: false,
  },
};
