// Anthropic's native Messages API: Messages clients pass through, Chat (and Responses, over Chat)
// is translated to Messages and back.
import { chatToAnthropic } from "./chat-plan.js";
import { messagesToAnthropic, usageFromAnthropic } from "./messages-plan.js";
import { type UpstreamDescriptor, ONE_TOKEN_CHAT } from "../descriptor.js";
import { anthropicCapabilities } from "./capabilities.js";
import { sseDecoder } from "../sse-decoder.js";
import { authenticateAnthropic } from "./authenticate.js";

export const anthropicUpstream: UpstreamDescriptor = {
  authenticate: authenticateAnthropic,
  transport: null,
  streamDecoder: sseDecoder,
  chatPlan: chatToAnthropic,
  // count_tokens: the client's body unchanged but for the model (Claude Code's gateway protocol).
  nativePlans: { messages: messagesToAnthropic, countTokens: (body, model) => ({ path: "/v1/messages/count_tokens", body: { ...body, model: model.upstreamModel } }) },
  readUsage: (reported) => usageFromAnthropic(reported as Parameters<typeof usageFromAnthropic>[0]),
  media: {},
  capabilities: anthropicCapabilities,
  keyTest: ONE_TOKEN_CHAT,
};
