// OpenAI and every OpenAI-compatible vendor (a new such vendor is config, not code): Chat
// Completions natively, Responses natively when the provider lists it in `apis`, Images, Videos,
// Embeddings.
import { openaiEmbeddings } from "./embeddings.js";
import { openaiVideosAdapter } from "./videos.js";
import { chatToOpenAiChat } from "./chat-plan.js";
import { responsesPassThrough } from "./responses-plan.js";
import { usageFromChat } from "../usage-readers.js";
import type { ChatUsage } from "../../wire/chat/index.js";
import { type UpstreamDescriptor, ONE_TOKEN_CHAT } from "../descriptor.js";
import { openaiCapabilities } from "./capabilities.js";
import { sseDecoder } from "../sse-decoder.js";
import { authenticateOpenAi } from "./authenticate.js";

export const openaiUpstream: UpstreamDescriptor = {
  authenticate: authenticateOpenAi,
  transport: null,
  streamDecoder: sseDecoder,
  chatPlan: chatToOpenAiChat,
  nativePlans: { chat: chatToOpenAiChat, responses: responsesPassThrough },
  readUsage: (reported) => usageFromChat(reported as ChatUsage | null | undefined),
  media: { images: { generationsPath: () => "/images/generations" }, videos: openaiVideosAdapter, embeddings: openaiEmbeddings },
  capabilities: openaiCapabilities,
  keyTest: ONE_TOKEN_CHAT,
};
