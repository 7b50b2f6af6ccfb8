// Token counters, never billed: POST /v1/messages/count_tokens (Anthropic's, which Claude Code calls
// for exact context sizes; without it, it falls back to a character estimate) and Gemini's
// :countTokens. When the model's upstream counts itself in the client's format (Anthropic's own
// endpoint, Gemini's), the request goes there with failover across keys and the upstream's number
// comes back; otherwise the gateway's documented estimate. Counting costs nothing upstream, so no
// hold is placed and no ledger row written.
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ModelConfig } from "../core/catalog.js";
import { GatewayError } from "../errors/catalogue.js";
import { ClientAbortedError } from "../upstreams/upstream-client.js";
import { signedRequest } from "../upstreams/request.js";
import { upstreamOf } from "../upstreams/registry.js";
import type { CountTokensPlan } from "../upstreams/descriptor.js";
import { estimateMessagesPromptTokens } from "../formats/messages/messages-over-chat.js";
import { estimateGeminiPromptTokens } from "../formats/gemini/gemini-over-chat.js";
import { checkRequestBody, readModelField } from "../formats/fields.js";
import { countTokensRequestSchema } from "../formats/request-schemas.js";
import { geminiCountTokensRequestSchema } from "../formats/gemini/request-schema.js";
import { forward, type Forwarded } from "./forward.js";
import { requestedModel } from "./admission.js";
import { countAttempts } from "./metered-call.js";
import { cancelOnClientClose } from "./client-departure.js";
import type { PipelineServices } from "./services.js";
import { upstreamError } from "./upstream-errors.js";

type Json = Record<string, unknown>;

/** Far above every context window; a larger count is not a count. */
const MAX_COUNT = 1_000_000_000;

interface Counter {
  /** The upstream's counter in the client's format; absent: the estimate answers. */
  plan: CountTokensPlan | undefined;
  /** The count in the upstream's answer (Anthropic's input_tokens, Gemini's totalTokens). */
  countOf: (answer: Json) => unknown;
  /** The gateway's estimate, as the client's format answers it. */
  estimate: () => Json;
}

async function count(services: PipelineServices, body: Json, model: ModelConfig, counter: Counter, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  // A routing group has no single upstream to ask: its deployments may count differently.
  if (model.group || !counter.plan) return counter.estimate();
  const { provider } = model;
  const plan = counter.plan(body, model);
  const upstreamBody = JSON.stringify(plan.body);
  const { authenticate } = upstreamOf(provider);
  let forwarded: Forwarded;
  try {
    forwarded = await forward(services, request.principal.account.id, provider, {
      build: (key) => signedRequest(authenticate, provider, "POST", plan.path, key, upstreamBody, request.headers),
      awaitFirstChunk: false,
      signal: cancelOnClientClose(reply),
      onAttempt: countAttempts(request, reply),
    });
  } catch (error) {
    // The client went away: nobody reads the answer, and it is not the gateway's error.
    if (error instanceof ClientAbortedError) return counter.estimate();
    throw error;
  }
  const { response, scrubber } = forwarded;
  const text = await response.body.text().catch(() => "");
  if (response.status < 200 || response.status >= 300) throw upstreamError(response.status, text, scrubber);
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new GatewayError("provider_error", "The upstream answered with a body that is not JSON.");
  }
  const counted = typeof answer === "object" && answer !== null && !Array.isArray(answer) ? counter.countOf(answer as Json) : undefined;
  if (!Number.isSafeInteger(counted) || (counted as number) < 0 || (counted as number) > MAX_COUNT) {
    throw new GatewayError("provider_error", "The upstream's token count could not be read.");
  }
  request.meter.inputTokens = counted as number;
  return scrubber.scrubJson(answer);
}

export async function countMessagesTokens(services: PipelineServices, body: Json, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  checkRequestBody(countTokensRequestSchema, body);
  const model = requestedModel(services, request, readModelField(body), "chat");
  return count(
    services,
    body,
    model,
    {
      plan: upstreamOf(model.provider).nativePlans.countTokens,
      countOf: (answer) => answer.input_tokens,
      estimate: () => ({ input_tokens: estimateMessagesPromptTokens(body) }),
    },
    request,
    reply,
  );
}

/** Gemini's :countTokens for the model in the path: `contents`, or a whole `generateContentRequest`. */
export async function countGeminiTokens(services: PipelineServices, modelId: string, body: Json, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const checked = checkRequestBody(geminiCountTokensRequestSchema, body);
  const model = requestedModel(services, request, modelId, "chat");
  const estimate = () => {
    const totalTokens = estimateGeminiPromptTokens(checked.generateContentRequest ?? checked);
    request.meter.inputTokens = totalTokens;
    return { totalTokens };
  };
  return count(services, body, model, { plan: upstreamOf(model.provider).nativePlans.geminiCountTokens, countOf: (answer) => answer.totalTokens, estimate }, request, reply);
}
