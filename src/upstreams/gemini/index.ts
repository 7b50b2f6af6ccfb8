// Google's native Gemini API (generateContent): chat models, Chat translated to Gemini and back;
// Responses and Messages clients are bridged over it, Gemini API clients pass through. Embedding
// models on batchEmbedContents.
import { convertGeminiUsageToChat } from "./translators.js";
import { chatToGemini } from "./chat-plan.js";
import { geminiCountTokensPassThrough, geminiPassThrough } from "./gemini-plan.js";
import { usageFromChat } from "../usage-readers.js";
import { type UpstreamDescriptor, ONE_TOKEN_CHAT } from "../descriptor.js";
import { geminiCapabilities } from "./capabilities.js";
import { authenticateGoogle } from "../google-operations/authenticate.js";
import { sseDecoder } from "../sse-decoder.js";
import { geminiEmbeddings } from "./embeddings.js";

export const geminiUpstream: UpstreamDescriptor = {
  authenticate: authenticateGoogle,
  transport: null,
  streamDecoder: sseDecoder,
  chatPlan: chatToGemini,
  // Gemini API clients (/v1beta) pass through: the model renamed, the answer scrubbed; so does their count.
  nativePlans: { gemini: geminiPassThrough, geminiCountTokens: geminiCountTokensPassThrough },
  readUsage: (reported) => (reported && typeof reported === "object" ? usageFromChat(convertGeminiUsageToChat(reported)) : null),
  media: { embeddings: geminiEmbeddings },
  capabilities: geminiCapabilities,
  keyTest: ONE_TOKEN_CHAT,
};
