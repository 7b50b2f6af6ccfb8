// Azure OpenAI: OpenAI's wire format at Azure's addresses (paths.ts) with an `api-key` header.
// The OpenAI plans are reused as they are, only re-addressed: Chat natively (buffered and streamed,
// Azure's content-filter fields passing through), Responses natively when the provider lists it in
// `apis`, the Images API and the Embeddings API. Usage is OpenAI's Chat usage.
import type { ModelConfig } from "../../core/catalog.js";
import type { ChatUsage } from "../../wire/chat/index.js";
import { chatToOpenAiChat } from "../openai/chat-plan.js";
import { responsesPassThrough } from "../openai/responses-plan.js";
import { openaiEmbeddings } from "../openai/embeddings.js";
import { usageFromChat } from "../usage-readers.js";
import { type PlanBuilder, type UpstreamDescriptor, ONE_TOKEN_CHAT } from "../descriptor.js";
import { azureOpenAiCapabilities } from "./capabilities.js";
import { sseDecoder } from "../sse-decoder.js";
import { authenticateAzure } from "./authenticate.js";
import { azurePath, type AzureOperation } from "./paths.js";

/** An OpenAI plan builder whose requests go to the operation's Azure path instead of OpenAI's. */
function atAzurePath(build: PlanBuilder, operation: AzureOperation): PlanBuilder {
  return (body, model) => {
    const plan = build(body, model);
    plan.path = azurePath(model, operation);
    return plan;
  };
}

const azureChat = atAzurePath(chatToOpenAiChat, "chat/completions");

export const azureOpenAiUpstream: UpstreamDescriptor = {
  authenticate: authenticateAzure,
  transport: null,
  streamDecoder: sseDecoder,
  chatPlan: azureChat,
  nativePlans: { chat: azureChat, responses: atAzurePath(responsesPassThrough, "responses") },
  readUsage: (reported) => usageFromChat(reported as ChatUsage | null | undefined),
  media: {
    images: { generationsPath: (model: ModelConfig) => azurePath(model, "images/generations") },
    embeddings: { ...openaiEmbeddings, path: (model) => azurePath(model, "embeddings") },
  },
  capabilities: azureOpenAiCapabilities,
  keyTest: ONE_TOKEN_CHAT,
};
