// The demo upstream: answers made up inside the gateway process (no network, no key, no real
// model), so that a first start without a config file can answer, stream, call tools and bill
// (docs/decisions/0020-built-in-demo-upstream.md). It speaks OpenAI Chat Completions; Responses
// and Messages clients are served by the bridges over its Chat plan, as for every Chat upstream.
import type { ChatUsage } from "../../wire/chat/index.js";
import { chatToOpenAiChat } from "../openai/chat-plan.js";
import { usageFromChat } from "../usage-readers.js";
import { type UpstreamDescriptor, ONE_TOKEN_CHAT } from "../descriptor.js";
import { demoCapabilities } from "./capabilities.js";
import { sseDecoder } from "../sse-decoder.js";
import { demoTransport } from "./transport.js";

export const demoUpstream: UpstreamDescriptor = {
  // The transport never sends credentials anywhere; the key is a placeholder that forward's key rotation needs.
  authenticate: () => undefined,
  transport: demoTransport,
  streamDecoder: sseDecoder,
  chatPlan: chatToOpenAiChat,
  nativePlans: { chat: chatToOpenAiChat },
  readUsage: (reported) => usageFromChat(reported as ChatUsage | null | undefined),
  media: {},
  capabilities: demoCapabilities,
  keyTest: ONE_TOKEN_CHAT,
};
