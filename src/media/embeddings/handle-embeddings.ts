// POST /v1/embeddings: the stages of every paid route (resolve model -> tier -> admit and forward
// with failover, pipeline/metered-call.ts -> read and scrub -> settle -> send) for embedding-kind
// models. Billed per input token: held at the estimate of the inputs, settled with the upstream's
// usage.prompt_tokens, or with that estimate (marked estimated) when the upstream reports none.
// The answer is read whole and settled before anything is sent; base64 vectors go out as slices of
// the buffer read and float vectors as the numbers sent (base64-payloads.ts): nothing is re-encoded.
import type { FastifyReply, FastifyRequest } from "fastify";
import { plausibleUsage, type Usage } from "../../core/usage.js";
import { GatewayError } from "../../errors/catalogue.js";
import type { Forwarded } from "../../pipeline/forward.js";
import { admissionFor, requestedModel } from "../../pipeline/admission.js";
import { openMeteredCall } from "../../pipeline/metered-call.js";
import { cancelOnClientClose } from "../../pipeline/client-departure.js";
import type { PipelineServices } from "../../pipeline/services.js";
import type { EmbeddingsApi } from "../../upstreams/descriptor.js";
import { upstreamOf } from "../../upstreams/registry.js";
import { signedRequest } from "../../upstreams/request.js";
import { scrubJsonWithPayloads, type ScrubbedBody } from "../images/base64-payloads.js";
import { settleAndSend } from "../settle-and-send.js";
import { readWholeAnswer } from "../upstream-post.js";
import { embeddingList } from "./embedding-list.js";
import type { EmbeddingRequest } from "../../upstreams/embedding-request.js";
import { parseEmbeddingRequest } from "./embedding-request.js";
import { recordClientGone } from "../../pipeline/request-context.js";
import { guardRequest } from "../../pipeline/guardrails/stage.js";
import type { MeteredRequest } from "../../pipeline/metered-call.js";
import { lookUpAnswer, storeAnswer } from "../../pipeline/response-cache/cache-stage.js";
import { embeddingsEntry, serveEmbeddingsHit } from "./cached-embeddings.js";

/** 2,048 vectors of 3,072 floats as JSON text is about 140 MB. */
export const MAX_EMBEDDINGS_RESPONSE_BYTES = 256 * 1024 * 1024;

/**
 * What the client gets, made from OpenAI's list (the upstream's, or the one the gateway built from
 * another shape), before it is scrubbed: the list itself on /v1/embeddings, Google's shape on the
 * Gemini routes (gemini-embeddings.ts).
 */
export type EmbeddingAnswerShape = (list: Record<string, unknown> & { data: unknown[] }, modelId: string) => unknown;

/** OpenAI's list, with the client's model id in place of the upstream's, as on the chat routes. */
const openAiList: EmbeddingAnswerShape = (list, modelId) => ({ ...list, model: modelId });

export async function handleEmbeddings(services: PipelineServices, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  await serveEmbeddings(services, request, reply, parseEmbeddingRequest(request.body), openAiList);
}

/** An embeddings request already parsed, billed as /v1/embeddings is, answered in the shape asked. */
export async function serveEmbeddings(
  services: PipelineServices,
  request: FastifyRequest,
  reply: FastifyReply,
  parsed: EmbeddingRequest,
  shape: EmbeddingAnswerShape,
): Promise<void> {
  const model = requestedModel(services, request, parsed.model, "embedding");
  // The request-side guardrails on the texts to embed (token-id inputs carry no text).
  const guarded = await guardRequest(services, request, { input: parsed.input });
  const input: EmbeddingRequest = { ...parsed, input: guarded.input as EmbeddingRequest["input"] };
  const upstream = upstreamOf(model.provider);
  const api = upstream.media.embeddings;
  if (!api) throw new GatewayError("provider_error", `The provider of ${model.id} has no embeddings API.`);

  const provider = model.provider;
  const path = api.path(model);
  const body = JSON.stringify(api.requestBody(input, model));
  const cancellation = cancelOnClientClose(reply);
  const metered: MeteredRequest = {
    ...admissionFor(services, request, reply, { model, route: "embeddings", projectedInputTokens: input.projectedTokens, projectedOutputTokens: 0 }),
    build: (key) => signedRequest(upstream.authenticate, provider, "POST", path, key, body, request.headers),
    awaitFirstChunk: false,
    signal: cancellation,
  };
  // The response cache (ADR 0044) on /v1/embeddings only: the Gemini routes shape the list otherwise.
  const cached =
    shape === openAiList && isObject(request.body)
      ? await lookUpAnswer(services, request, reply, { route: "embeddings", modelId: model.id, body: request.body, delivery: "buffered" })
      : null;
  if (cached?.entry) return serveEmbeddingsHit(services, request, reply, metered, cached.entry);
  const call = await openMeteredCall(services, metered);
  let answered: { scrubbed: ScrubbedBody; usage: Usage } | undefined;
  const read = async () => (answered = await readAnswer(call!.upstream, api, input, model.id, shape));
  // The client went away (before an answer, or while it was read): nothing held or charged, nobody to answer.
  if (call === null || (await settleAndSend(call, request, reply, cancellation, read, "embeddings")) === undefined) recordClientGone(request, services);
  // Stored once settled (the cost is on the meter then), whether or not the client stayed to read it.
  const cost = request.meter.costNano;
  if (cached !== null && answered !== undefined && cost !== undefined) storeAnswer(services, cached, embeddingsEntry(answered.scrubbed, answered.usage, cost, model.id));
}

/** Reads, converts when the upstream is not OpenAI-shaped, and scrubs a 2xx answer; the usage to settle. */
async function readAnswer(
  answer: Forwarded,
  api: EmbeddingsApi,
  input: EmbeddingRequest,
  modelId: string,
  shape: EmbeddingAnswerShape,
): Promise<{ scrubbed: ScrubbedBody; usage: Usage }> {
  let body = await readWholeAnswer(answer.response.body, MAX_EMBEDDINGS_RESPONSE_BYTES);

  let scrubbed: ScrubbedBody;
  let reported: unknown;
  try {
    if (api.readAnswer) {
      const read = api.readAnswer(JSON.parse(body.toString("utf8")));
      if (read.vectors.length !== input.inputCount) throw new GatewayError("provider_error", "The upstream answered a different number of embeddings than inputs.");
      reported = read.promptTokens;
      body = Buffer.from(JSON.stringify(embeddingList(read.vectors, input.encodingFormat, modelId, read.promptTokens ?? input.projectedTokens)));
    }
    // The list is read (its usage: numbers, which scrubbing leaves alone) and shaped before it is scrubbed.
    scrubbed = scrubJsonWithPayloads(body, answer.scrubber, (list) => {
      if (!isObject(list) || !Array.isArray(list.data)) throw new GatewayError("provider_error", "The upstream answer is not an embeddings list.");
      if (!api.readAnswer) reported = isObject(list.usage) ? list.usage.prompt_tokens : undefined;
      return shape(list as Record<string, unknown> & { data: unknown[] }, modelId);
    });
  } catch (error) {
    if (error instanceof SyntaxError) throw new GatewayError("provider_error", "The upstream answered with a body that is not JSON.");
    if (error instanceof GatewayError) throw error;
    throw new GatewayError("internal_error"); // contract item 9: never the unscrubbed body
  }

  const measured: Usage | null =
    typeof reported === "number" ? plausibleUsage({ inputTokens: reported, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0, estimated: false }) : null;
  return { scrubbed, usage: measured ?? { inputTokens: input.projectedTokens, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0, estimated: true } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
