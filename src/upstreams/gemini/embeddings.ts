// Embeddings on Google's Gemini API: POST /v1beta/models/{model}:batchEmbedContents, one
// EmbedContentRequest per input, answered with { embeddings: [{ values }] } in input order, which
// the gateway turns into OpenAI's list (readAnswer), each with the taskType and title a Google client
// gave it (EmbeddingRequest.inputHints). Gemini embeds text only, at most 100 inputs in
// one batch, and reports no token usage for embeddings: the gateway bills its estimate, marked
// estimated, unless an answer carries usageMetadata.promptTokenCount.
import { GatewayError, invalidRequest } from "../../errors/catalogue.js";
import type { EmbeddingRequest } from "../embedding-request.js";
import type { EmbeddingsApi } from "../descriptor.js";

/** Gemini's limit of requests in one batchEmbedContents call ("at most 100 requests can be in one batch"). */
export const MAX_GEMINI_EMBEDDING_INPUTS = 100;

function modelName(upstreamModel: string): string {
  return upstreamModel.replace(/^models\//, "");
}

/** The texts to embed; token ids have no meaning to Gemini's tokenizer, so they are refused. */
function texts(request: EmbeddingRequest): string[] {
  const input = request.input;
  if (typeof input === "string") return [input];
  if (!input.every((item): item is string => typeof item === "string")) {
    throw invalidRequest("input", "This model's provider (Gemini) embeds text only: input must be a string or an array of strings, not token ids.");
  }
  if (input.length > MAX_GEMINI_EMBEDDING_INPUTS) throw invalidRequest("input", `This model's provider (Gemini) takes at most ${MAX_GEMINI_EMBEDDING_INPUTS} inputs per request.`);
  return input;
}

function readVectors(answer: unknown): number[][] {
  const embeddings = isObject(answer) ? answer.embeddings : undefined;
  if (!Array.isArray(embeddings)) throw new GatewayError("provider_error", "The upstream answer is not a batch of embeddings.");
  return embeddings.map((embedding: unknown) => {
    const values = isObject(embedding) ? embedding.values : undefined;
    if (!Array.isArray(values) || !values.every((value): value is number => typeof value === "number"))
      throw new GatewayError("provider_error", "The upstream answer holds an embedding without values.");
    return values;
  });
}

export const geminiEmbeddings: EmbeddingsApi = {
  path: (model) => `/v1beta/models/${encodeURIComponent(modelName(model.upstreamModel))}:batchEmbedContents`,
  // OpenAI's `user` has no Gemini counterpart and is not sent.
  requestBody: (request, model) => ({
    requests: texts(request).map((text, i) => {
      const hint = request.inputHints?.[i];
      return {
        model: `models/${modelName(model.upstreamModel)}`,
        content: { parts: [{ text }] },
        ...(hint?.taskType != null && { taskType: hint.taskType }),
        ...(hint?.title != null && { title: hint.title }),
        ...(request.dimensions !== null && { outputDimensionality: request.dimensions }),
      };
    }),
  }),
  readAnswer: (answer) => {
    const usage = isObject(answer) ? answer.usageMetadata : undefined;
    const promptTokens = isObject(usage) && typeof usage.promptTokenCount === "number" ? usage.promptTokenCount : null;
    return { vectors: readVectors(answer), promptTokens };
  },
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
