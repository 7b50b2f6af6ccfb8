// POST /v1beta/models/{model}:embedContent and :batchEmbedContents (Google's Gemini API, the
// @google/genai SDK's models.embedContent): the request becomes the gateway's embeddings request and
// runs the /v1/embeddings path (any upstream type with an embeddings API, billed on the route
// "embeddings" exactly as /v1/embeddings is); the answer is Google's: { embedding: { values } } for
// one, { embeddings: [{ values }] } for a batch, in request order.
import type { FastifyReply, FastifyRequest } from "fastify";
import { GatewayError } from "../../errors/catalogue.js";
import { serveEmbeddings, type EmbeddingAnswerShape } from "./handle-embeddings.js";
import { parseGeminiEmbedRequest } from "./gemini-embed-request.js";

export type GeminiEmbedAction = "embedContent" | "batchEmbedContents";

/** The vectors of OpenAI's list, in input order (by index); the gateway asked for floats. */
function vectors(data: unknown[]): number[][] {
  const entries = data.map((entry) => (typeof entry === "object" && entry !== null ? (entry as { index?: unknown; embedding?: unknown }) : {}));
  entries.sort((a, b) => (typeof a.index === "number" && typeof b.index === "number" ? a.index - b.index : 0));
  return entries.map((entry) => {
    if (!Array.isArray(entry.embedding)) throw new GatewayError("provider_error", "The upstream answer holds an embedding without values.");
    return entry.embedding as number[];
  });
}

/** Google's answer for `count` inputs: one embedding, or the batch; a different count is the upstream's fault. */
function googleShape(isBatch: boolean, count: number): EmbeddingAnswerShape {
  return (list) => {
    const values = vectors(list.data);
    if (values.length !== count) throw new GatewayError("provider_error", "The upstream answered a different number of embeddings than inputs.");
    return isBatch ? { embeddings: values.map((v) => ({ values: v })) } : { embedding: { values: values[0] } };
  };
}

export async function handleGeminiEmbeddings(action: GeminiEmbedAction, model: string, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const isBatch = action === "batchEmbedContents";
  const input = parseGeminiEmbedRequest(request.body, model, isBatch);
  await serveEmbeddings(request.snapshot.pipeline, request, reply, input, googleShape(isBatch, input.inputCount));
}
