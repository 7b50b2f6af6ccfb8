// POST /v1/images/generations: the same stages as a chat request (resolve model -> tier -> admit
// and forward with failover, pipeline/metered-call.ts -> scrub -> settle -> send), for image-kind
// models, over an OpenAI Images-compatible upstream. The upstream answer is read whole before
// anything is sent: the charge is settled first (a truncated or invalid answer is never billed or
// delivered with a 200), and the base64 images then go out as slices of that one buffer (see
// base64-payloads.ts).
import type { FastifyReply, FastifyRequest } from "fastify";
import { estimateTextTokens } from "../../billing/estimate-tokens.js";
import { MAX_USAGE_COUNT, type Usage } from "../../core/usage.js";
import { GatewayError } from "../../errors/catalogue.js";
import { admissionFor, requestedModel } from "../../pipeline/admission.js";
import type { Forwarded } from "../../pipeline/forward.js";
import { openMeteredCall } from "../../pipeline/metered-call.js";
import { cancelOnClientClose } from "../../pipeline/client-departure.js";
import type { PipelineServices } from "../../pipeline/services.js";
import { upstreamOf } from "../../upstreams/registry.js";
import { signedRequest } from "../../upstreams/request.js";
import type { MediaSettings } from "../../config/media-settings.js";
import { settleAndSend } from "../settle-and-send.js";
import { readWholeAnswer } from "../upstream-post.js";
import { scrubJsonWithPayloads, type ScrubbedBody } from "./base64-payloads.js";
import { imageVariant, parseImageRequest, type ImageRequest } from "./image-request.js";
import { recordClientGone } from "../../pipeline/request-context.js";

export async function handleImageGeneration(services: PipelineServices, settings: MediaSettings, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const input = parseImageRequest(request.body);
  const model = requestedModel(services, request, input.model, "image");
  const upstream = upstreamOf(model.provider);
  const images = upstream.media.images;
  if (!images) throw new GatewayError("provider_error", `The provider of ${model.id} does not speak the OpenAI Images API.`);

  const tokenPriced = model.pricing.inputPerMtok > 0n || model.pricing.outputPerMtok > 0n;
  const provider = model.provider;
  const body = JSON.stringify({ ...input.body, model: model.upstreamModel });
  const cancellation = cancelOnClientClose(reply);
  const call = await openMeteredCall(services, {
    ...admissionFor(services, request, reply, {
      model,
      route: "images",
      projectedImages: input.n,
      imageVariant: imageVariant(input),
      // Token prices only apply to token counts the upstream reports; hold for them only when priced.
      projectedInputTokens: tokenPriced ? estimateTextTokens(input.prompt) : 0,
      projectedOutputTokens: tokenPriced ? input.n * model.defaultOutputTokens : 0,
    }),
    build: (key) => signedRequest(upstream.authenticate, provider, "POST", images.generationsPath(model), key, body, request.headers),
    awaitFirstChunk: false,
    signal: cancellation,
  });
  // The client went away (before an answer, or while it was read): nothing held or charged, nobody to answer.
  if (call === null || (await settleAndSend(call, request, reply, cancellation, () => readAnswer(call.upstream, input, settings), "images")) === undefined)
    recordClientGone(request, services);
}

/** Reads and scrubs a 2xx answer whole, up to the configured limit. */
async function readAnswer(answer: Forwarded, input: ImageRequest, settings: MediaSettings): Promise<{ scrubbed: ScrubbedBody; usage: Usage }> {
  const { response, scrubber } = answer;
  const body = await readWholeAnswer(response.body, settings.maxImageResponseBytes);

  let scrubbed: ScrubbedBody;
  try {
    scrubbed = scrubJsonWithPayloads(body, scrubber);
  } catch (error) {
    if (error instanceof SyntaxError) throw new GatewayError("provider_error", "The upstream answered with a body that is not JSON.");
    throw new GatewayError("internal_error"); // contract item 9: never the unscrubbed body
  }
  return { scrubbed, usage: usageOf(scrubbed.json, input) };
}

/**
 * Images delivered (never more than asked for) at the per-image price, plus the token counts the
 * upstream reports (GPT image models), priced by the model's token prices.
 */
export function usageOf(json: unknown, input: ImageRequest): Usage {
  const doc = (json && typeof json === "object" ? json : {}) as { data?: unknown; usage?: unknown };
  const delivered = Array.isArray(doc.data) ? doc.data.length : 0;
  const reported = (doc.usage && typeof doc.usage === "object" ? doc.usage : {}) as Record<string, unknown>;
  const details = (reported.input_tokens_details && typeof reported.input_tokens_details === "object" ? reported.input_tokens_details : {}) as Record<string, unknown>;
  return {
    inputTokens: count(reported.input_tokens),
    cachedInputTokens: count(details.cached_tokens),
    outputTokens: count(reported.output_tokens),
    reasoningTokens: 0,
    images: Math.min(delivered, input.n),
    estimated: false,
  };
}

/** A reported token count; one no upstream could measure (negative, 1e30, not a number) counts 0, images are still charged. */
function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 && value <= MAX_USAGE_COUNT ? Math.ceil(value) : 0;
}
